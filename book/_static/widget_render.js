// Draws the page's widgets (the micro-batch steppers) from their saved state, as soon as
// the page's text is parsed. The widget bundle's own last line would wait for the page's
// "load" event, that is for every picture and font of the page, and a long chapter's
// stepper then appeared seconds after its text; scripts/vendor_widgets.py leaves it out.
// Deferred like the scripts before it, this runs after them, before DOMContentLoaded.
(function () {
  window.require(["@jupyter-widgets/html-manager/dist/libembed-amd"], function (embed) {
    embed.renderWidgets();
  });
})();
