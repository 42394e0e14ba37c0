/*
 * Every picture a chapter's cell draws opens at full size with one tap: on a phone a
 * picture is scaled down to the screen's width, and a reader who wants to read it closer
 * opens the picture alone, where the browser can zoom it. The link is named by the
 * picture's own description (its alt text).
 */
(function () {
  function linkPictures() {
    document.querySelectorAll("article .cell_output img").forEach((picture) => {
      if (picture.closest("a")) return;
      const link = document.createElement("a");
      link.href = picture.getAttribute("src");
      link.className = "picture-full-size";
      link.title = "open the picture at full size";
      picture.replaceWith(link);
      link.appendChild(picture);
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", linkPictures);
  } else {
    linkPictures();
  }
})();
