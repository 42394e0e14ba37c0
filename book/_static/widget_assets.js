// Loaded between RequireJS and the widget manager (embed-amd.js) on pages with widgets
// (see scripts/vendor_widgets.py). The manager looks for its fonts next to where RequireJS
// says its modules live; without this they would be looked up relative to the page and be
// missing. Both module names are placed in _static/widgets/, where the files are.
(function () {
  var here = new URL("widgets/", document.currentScript.src).href;
  window.__jupyter_widgets_assets_path__ = here;
  window.require.config({
    paths: {
      "@jupyter-widgets/html-manager": here + "html-manager",
      "@jupyter-widgets/html-manager/dist/libembed-amd": here + "libembed-amd",
    },
  });
})();
