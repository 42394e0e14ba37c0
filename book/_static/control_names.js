/*
 * Names for controls that have none, or one a screen reader's user cannot match with what
 * the screen shows (axe-core's rules, run on every page by tests/browser/test_accessibility.py).
 *
 * The stepper: ipywidgets draws the play widget as three buttons holding only an icon, and the slider's
 * handle (role="slider") apart from its label, so assistive technology announces "button,
 * button, button, slider" with nothing to say what each does. Each gets the name a sighted
 * reader infers from the picture: play, stop, repeat, and the slider's own label.
 */
(function () {
  const ICON_NAMES = { play: "play", pause: "pause", stop: "stop", retweet: "repeat" };

  function name(stepper) {
    stepper.querySelectorAll(".widget-play button").forEach((button) => {
      // The icon is an <i class="fa fa-play"> drawn with the widgets' icon font.
      const icon = button.querySelector("i.fa");
      const kinds = icon ? [...icon.classList].filter((c) => c.startsWith("fa-")) : [];
      const said = kinds.map((c) => ICON_NAMES[c.slice(3)]).find(Boolean);
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

  // The theme's search buttons show "Search Ctrl+K" but are named "Search" only, and its
  // colour-mode button shows the current mode's icon (titled Light, Dark or System
  // Settings) under the name "Color mode": a reader who says what they see ("click Search
  // Ctrl K", "click Dark") must find it under that name. Each takes its visible words.
  const MODES = { light: "Light", dark: "Dark", auto: "System Settings" };

  function nameThemeControls() {
    document.querySelectorAll(".search-button-field").forEach((button) => {
      const seen = button.textContent.replace(/\s+/g, " ").trim();
      if (seen && button.getAttribute("aria-label") !== seen) {
        button.setAttribute("aria-label", seen);
      }
    });
    const mode = MODES[document.documentElement.dataset.mode] || MODES.auto;
    document.querySelectorAll(".theme-switch-button").forEach((button) => {
      const said = `Color mode: ${mode}`;
      if (button.getAttribute("aria-label") !== said) {
        button.setAttribute("aria-label", said);
      }
    });
  }

  // A folded code cell (myst-nb's hide-input) opens with a <summary> that shows "Show code
  // cell source" but is labelled "Toggle hidden content". Without the label its name is
  // the words it shows, and they change with it.
  function nameFoldedCells() {
    document.querySelectorAll("details.hide > summary[aria-label]").forEach((summary) => {
      summary.removeAttribute("aria-label");
    });
  }

  // A chapter with a further page has a fold in the site's chapter list: a <summary>
  // holding only a chevron icon, which a screen reader announces as nothing. It takes the
  // words a sighted reader infers: the sections of that chapter.
  function nameChapterFolds() {
    document.querySelectorAll(".toctree-l1 > details > summary").forEach((summary) => {
      const link = summary.parentElement.parentElement.querySelector(":scope > a");
      if (!summary.textContent.trim() && link && !summary.hasAttribute("aria-label")) {
        summary.setAttribute("aria-label", `Sections of ${link.textContent.trim()}`);
      }
    });
  }

  function nameAll() {
    document.querySelectorAll(".micro-batch-stepper").forEach(name);
    nameThemeControls();
    nameFoldedCells();
    nameChapterFolds();
  }

  // Widgets are drawn after the page's text, and the play button swaps its icon as it plays.
  // The colour mode is an attribute of the page's root, changed by the mode button.
  new MutationObserver(nameAll).observe(document.documentElement,
    { childList: true, subtree: true, attributes: true, attributeFilter: ["data-mode"] });
  document.addEventListener("DOMContentLoaded", nameAll);
})();
