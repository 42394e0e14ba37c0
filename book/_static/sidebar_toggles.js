/*
 * The site's two menu buttons, made to work at every width.
 *
 * pydata-sphinx-theme 0.17 puts its own "site navigation" and "on this page" buttons in
 * the page header and binds its drawer handlers to the *first* element with the class
 * `primary-toggle` (and `secondary-toggle`) that the page holds. sphinx-book-theme 1.3
 * draws the buttons a reader actually sees, with the same classes, later in the page: they
 * never get a handler, so on a phone the chapter list cannot be opened at all
 * (pydata/pydata-sphinx-theme#2451). Here every other button of each kind passes its click
 * on to the first one, whose handlers then do what the themes intend: open the drawer as a
 * dialog on a narrow screen, fold the sidebar away on a wide one.
 */
(function () {
  function forwardClicks(selector) {
    const buttons = Array.from(document.querySelectorAll(selector));
    const bound = buttons[0];
    buttons.slice(1).forEach((button) => {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        bound.click();
      });
    });
  }

  function setUp() {
    forwardClicks(".primary-toggle");
    forwardClicks(".secondary-toggle");
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
