/*
 * Names for the stepper's controls, for readers who use a screen reader or a keyboard.
 *
 * ipywidgets draws the play widget as three buttons holding only an icon, and the slider's
 * handle (role="slider") apart from its label, so assistive technology announces "button,
 * button, button, slider" with nothing to say what each does. Each gets the name a sighted
 * reader infers from the picture: play, stop, repeat, and the slider's own label.
 */
(function () {
  const ICON_NAMES = { play: "play", pause: "pause", stop: "stop", retweet: "repeat" };

  function name(stepper) {
    stepper.querySelectorAll(".widget-play button").forEach((button) => {
      const icon = button.querySelector("[data-icon]");
      const said = icon && ICON_NAMES[icon.getAttribute("data-icon")];
      if (said && button.getAttribute("aria-label") !== said) {
        button.setAttribute("aria-label", said);
        button.setAttribute("title", said);
      }
    });
    stepper.querySelectorAll(".widget-slider").forEach((slider) => {
      const label = slider.querySelector(".widget-label");
      const handle = slider.querySelector("[role=slider]");
      if (label && handle && !handle.hasAttribute("aria-label")) {
        handle.setAttribute("aria-label", label.textContent.trim());
      }
    });
  }

  function nameAll() {
    document.querySelectorAll(".micro-batch-stepper").forEach(name);
  }

  // Widgets are drawn after the page has loaded, and an icon can be swapped for an SVG later.
  new MutationObserver(nameAll).observe(document.documentElement, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", nameAll);
})();
