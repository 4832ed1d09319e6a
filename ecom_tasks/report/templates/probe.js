window.__reportErrors = [];
window.addEventListener("error", function (e) { window.__reportErrors.push(String(e.message || e)); record(); });
document.addEventListener("securitypolicyviolation", function (e) { window.__reportErrors.push("blocked by the page's policy: " + e.violatedDirective + " " + (e.sample || "")); record(); });
var __consoleError = console.error;
console.error = function () { window.__reportErrors.push(Array.prototype.join.call(arguments, " ")); record(); __consoleError.apply(console, arguments); };
function record() { var n = document.getElementById("report-errors"); if (n) { n.textContent = JSON.stringify(window.__reportErrors); } }
document.addEventListener("DOMContentLoaded", function () { record(); document.body.setAttribute("data-report-ready", "1"); });
