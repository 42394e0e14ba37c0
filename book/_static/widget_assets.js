// Loaded between RequireJS and the widget manager (embed-amd.js) on pages with widgets
// (see scripts/vendor_widgets.py); all three are deferred, so the page's text is drawn
// before they arrive, and they run in this order once it is parsed.
(function () {
  // The manager looks for its fonts next to where RequireJS says its modules live;
  // without this they would be looked up relative to the page, and be missing. The
  // module names are placed in _static/widgets/, where the files are: the ipywidgets 7
  // libraries, cut out of the bundle, are fetched from there only if a page needs them.
  var here = new URL("widgets/", document.currentScript.src).href;
  window.__jupyter_widgets_assets_path__ = here;
  window.require.config({
    paths: {
      "@jupyter-widgets/html-manager": here + "html-manager",
      "@jupyter-widgets/html-manager/dist/libembed-amd": here + "libembed-amd",
      "@jupyter-widgets/base7": here + "base7",
      "@jupyter-widgets/controls7": here + "controls7",
    },
  });
})();
