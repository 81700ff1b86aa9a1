// Copy buttons: a button with data-copy="ID" copies the text of element ID. No inline script needed.
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (!source || !navigator.clipboard) { return; }
  button.hidden = false;
  button.addEventListener("click", function () {
    navigator.clipboard.writeText(source.value || source.textContent).then(function () {
      button.textContent = "Copied";
    }, function () {
      source.select();
      button.textContent = "Press Ctrl+C to copy";
    });
  });
});
