// Rating and saving without a page load: the forms post as JSON, the buttons show the new state.
// Without this script every form still works (a plain POST, then back to the page).
document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (!form.matches("form.react, form.save")) return;
  event.preventDefault();
  const body = new URLSearchParams(new FormData(form, event.submitter));
  const response = await fetch(form.action, {
    method: "POST", body, headers: {"Accept": "application/json"}, credentials: "same-origin",
  });
  const answer = await response.json().catch(() => ({error: "no answer"}));
  const status = form.closest(".actions");
  if (!response.ok) {
    status.dataset.error = answer.error || "that did not work";
    status.setAttribute("data-state", "error");
    return;
  }
  if (form.matches("form.react")) {
    const value = event.submitter ? event.submitter.value : "";
    form.querySelectorAll("button[name=reaction]").forEach((button) => {
      button.setAttribute("aria-pressed", String(button.value === value && value !== "clear"));
    });
    const undo = form.querySelector("button.undo");
    if (undo) undo.hidden = value === "clear";
    status.setAttribute("data-state", value === "clear" ? "" : "rated");
  } else {
    status.setAttribute("data-state", "saved");
  }
});

// The profile's import: a chosen file is read into the text box (then sent as the form is);
// without this script the box takes a pasted export.
const importFile = document.getElementById("import-file");
if (importFile) {
  importFile.closest(".import-file").hidden = false;
  importFile.addEventListener("change", async () => {
    const file = importFile.files[0];
    if (file) document.getElementById("import-text").value = await file.text();
  });
}
