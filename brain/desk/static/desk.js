// brain desk: tick-all for the inbox's bulk form, the ledger's charts (Chart.js, vendored), and
// a poll that offers a reload when the vault changes elsewhere (never reloads by itself: a form
// being filled in would be lost).
"use strict";
const POLL_MS = 3000;

function watch() {
  const drawn = document.body.dataset.stamp;
  const banner = document.getElementById("changed");
  if (!drawn || !banner) return;
  const timer = setInterval(async () => {
    try {
      const r = await fetch("/stamp", { credentials: "same-origin", cache: "no-store" });
      if (r.ok && (await r.text()) !== drawn) {
        banner.hidden = false;
        clearInterval(timer);
      }
    } catch (e) {
      clearInterval(timer); // the desk stopped
    }
  }, POLL_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  watch();
  const all = document.getElementById("all");
  if (all) {
    all.addEventListener("change", () => {
      for (const box of document.querySelectorAll("input.tick")) box.checked = all.checked;
    });
  }
  const data = document.getElementById("chart-data");
  if (!data) return;
  const d = JSON.parse(data.textContent);
  const load = document.createElement("script");
  load.src = "/static/chart.umd.min.js";
  load.onload = () => draw(d);
  document.head.appendChild(load);
});

function draw(d) {
  const served = "#2f6fdf", saved = "#8fd1a8";
  const common = {
    responsive: true, maintainAspectRatio: false, animation: false,
    interaction: { mode: "index", intersect: false },
    datasets: { bar: { maxBarThickness: 48 } },
    plugins: { legend: { position: "bottom" } },
  };
  const stacked = { x: { stacked: true }, y: { stacked: true, beginAtZero: true } };
  new Chart(document.getElementById("by-day"), {
    type: "bar",
    data: { labels: d.days, datasets: [
      { label: "served", data: d.served, backgroundColor: served },
      { label: "saved", data: d.saved, backgroundColor: saved },
    ] },
    options: { ...common, scales: stacked },
  });
  new Chart(document.getElementById("by-caller"), {
    type: "bar",
    data: { labels: d.callers, datasets: [
      { label: "served", data: d.caller_served, backgroundColor: served },
      { label: "saved", data: d.caller_saved, backgroundColor: saved },
    ] },
    options: { ...common, indexAxis: "y", scales: { x: { stacked: true, beginAtZero: true }, y: { stacked: true } } },
  });
}
