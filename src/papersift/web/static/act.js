// A signed-in reader's controls on the shared pages (rate, save, follow) act in place: the form
// posts with its CSRF token in a header and the buttons show the new state, without a reload.
// Without this script each form is a plain POST that comes back to the same card.
document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (!form.matches("form.react, form.save, form.follow")) return;
  event.preventDefault();
  const body = new URLSearchParams(new FormData(form, event.submitter));
  const token = form.querySelector("input[name=csrf]");
  let response;
  try {
    response = await fetch(form.action, {
      method: "POST", body, credentials: "same-origin",
      headers: {"Accept": "application/json", "X-CSRF-Token": token ? token.value : ""},
    });
  } catch (error) {
    form.dataset.state = "error";
    return;
  }
  const answer = await response.json().catch(() => ({error: "no answer"}));
  if (!response.ok) {
    form.dataset.state = "error";
    form.title = answer.error || "that did not work";
    return;
  }
  form.dataset.state = "";
  if (form.matches("form.react")) {
    const value = event.submitter ? event.submitter.value : "";
    form.querySelectorAll("button[name=reaction]").forEach((button) => {
      button.setAttribute("aria-pressed", String(button.value === value && value !== "clear"));
    });
    const undo = form.querySelector("button.undo");
    if (undo) undo.hidden = value === "clear";
    form.closest(".actions").dataset.state = value === "clear" ? "" : "rated";
  } else if (form.matches("form.save")) {
    const button = form.querySelector("button");
    button.setAttribute("aria-pressed", "true");
    button.textContent = "Saved ✓";
    const where = form.querySelector(".saved-in");
    if (where) where.textContent = "in " + answer.result;
  } else {
    const button = form.querySelector("button");
    const on = button.getAttribute("aria-pressed") !== "true";
    button.setAttribute("aria-pressed", String(on));
    button.textContent = on ? button.dataset.on : button.dataset.off;
    form.action = on ? form.dataset.unfollow : form.dataset.follow;
  }
});
