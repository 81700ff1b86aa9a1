// A one-click link from an email: its page shows what the link does with a button, and this
// presses it at once, so a person's click in the email is the only click. A mail scanner that
// fetches the link without running scripts changes nothing (docs/architecture.md, Delivery).
var form = document.getElementById("link-confirm");
if (form && !sessionStorage.getItem("link-done:" + location.pathname)) {
  sessionStorage.setItem("link-done:" + location.pathname, "1");
  form.requestSubmit();
}
