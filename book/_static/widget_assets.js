// Loaded between RequireJS and the widget manager (embed-amd.js) on pages with widgets
// (see scripts/vendor_widgets.py).
(function () {
  // The manager looks for its fonts next to where RequireJS says its modules live;
  // without this they would be looked up relative to the page, and be missing. Both
  // module names are placed in _static/widgets/, where the files are.
  var here = new URL("widgets/", document.currentScript.src).href;
  window.__jupyter_widgets_assets_path__ = here;
  window.require.config({
    paths: {
      "@jupyter-widgets/html-manager": here + "html-manager",
      "@jupyter-widgets/html-manager/dist/libembed-amd": here + "libembed-amd",
    },
  });
  // The theme's Font Awesome replaces every <i class="fa ..."> with an <svg>, and the
  // play button then breaks when it swaps its own <i> icon (play/pause). "nest" puts
  // the <svg> inside the <i> instead. Font Awesome loads deferred, so it sees this.
  // The widgets draw the icon with their own font too: hide the nested copy.
  window.FontAwesomeConfig = Object.assign(window.FontAwesomeConfig || {}, {
    autoReplaceSvg: "nest",
  });
  var style = document.createElement("style");
  style.textContent = ".jupyter-widgets i.fa > svg { display: none; }";
  document.head.appendChild(style);
})();
