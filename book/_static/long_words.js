/*
 * A word wider than the whole output block breaks inside its table cell; every other word
 * of a table stays whole.
 *
 * The sheet keeps each word of a cell's table whole (course.css: a column is at least as
 * wide as its longest word), and a table wider than its block scrolls sideways. A word
 * that is alone wider than the block, such as chapter 1's error class
 * [STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] on a phone, would make its table scroll
 * whatever else it holds, and its sentences be read by swiping back and forth line by
 * line: that word breaks where it must (the cell is given `overflow-wrap: anywhere`), and
 * the table fits. Measured again when the window's width changes.
 */
(function () {
  const LONG = "course-long-word";
  const canvas = document.createElement("canvas").getContext("2d");

  function widest(cell) {
    const style = getComputedStyle(cell);
    canvas.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    return Math.max(0, ...cell.textContent.split(/\s+/).map((w) => canvas.measureText(w).width));
  }

  function mark() {
    document.querySelectorAll("article .cell_output .output").forEach((block) => {
      const room = block.clientWidth;
      if (!room) return;
      block.querySelectorAll("table td, table th").forEach((cell) => {
        if (cell.closest(".micro-batch-stepper")) return;   // its own rules (course.css)
        const style = getComputedStyle(cell);
        const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
        cell.classList.toggle(LONG, widest(cell) + padding > room);
      });
    });
  }

  let pending = null;
  function soon() {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(mark);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mark);
  } else {
    mark();
  }
  document.fonts.ready.then(soon);   // measured again in the page's own fonts
  window.addEventListener("resize", soon);
})();
