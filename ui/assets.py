"""The page's stylesheet and script (given to `launch`; Gradio 6 takes them there)."""

from __future__ import annotations

import html
import json

CSS = """
#pt-header h1 { margin-bottom: 0; }
#pt-header p { margin-top: 2px; color: var(--body-text-color-subdued); }
#pt-sources-box { max-height: 690px; overflow-y: auto; padding-right: 4px; }
.pt-sources { display: flex; flex-direction: column; gap: 10px; font-size: 14px; }
.pt-hidden { display: none !important; }
.pt-empty { color: var(--body-text-color-subdued); border: 1px dashed var(--border-color-primary);
  border-radius: 10px; padding: 14px 16px; }
.pt-turn-head { display: flex; flex-direction: column; margin-bottom: 8px; }
.pt-turn-label { font-weight: 600; font-size: 12px; text-transform: uppercase;
  letter-spacing: .04em; color: var(--body-text-color-subdued); }
.pt-turn-q { font-style: italic; color: var(--body-text-color-subdued); }
.pt-card { border: 1px solid var(--border-color-primary); border-radius: 10px;
  padding: 10px 12px; margin-bottom: 10px; background: var(--background-fill-secondary);
  transition: box-shadow .25s, border-color .25s; scroll-margin-top: 12px; }
.pt-card.pt-active { border-color: var(--color-accent);
  box-shadow: 0 0 0 3px var(--color-accent-soft); }
.pt-card-head { display: flex; align-items: baseline; gap: 8px; line-height: 1.35;
  text-align: left; }
.pt-num { flex: none; display: inline-flex; align-items: center; justify-content: center;
  min-width: 22px; height: 22px; border-radius: 999px; background: var(--color-accent);
  color: white; font-size: 12px; font-weight: 700; }
.pt-title, .pt-title:visited { font-weight: 600; color: var(--body-text-color) !important;
  text-decoration: none; }
.pt-title:hover { text-decoration: underline; }
.pt-meta { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin: 4px 0 8px;
  font-size: 13px; color: var(--body-text-color-subdued); }
.pt-badge { font-size: 11px; font-weight: 700; text-transform: uppercase; letter-spacing: .04em;
  padding: 1px 8px; border-radius: 999px; }
.pt-badge-oral { background: #fde68a; color: #78350f; }
.pt-badge-spotlight { background: #c7d2fe; color: #312e81; }
.pt-badge-poster { background: #d1fae5; color: #065f46; }
#pt-sources-box .pt-passage { margin: 0; padding: 6px 10px; font-size: 13.5px;
  line-height: 1.55; border-left: 3px solid var(--border-color-accent); }
mark.pt-support { background: rgba(250, 204, 21, .45); color: inherit; border-radius: 3px;
  padding: 0 2px; }
.pt-gap { color: var(--body-text-color-subdued); }
#pt-sources-box .pt-card-foot { margin-top: 6px; font-size: 12px;
  color: var(--body-text-color-subdued); }
.pt-card-related { opacity: .92; }
.pt-card-foot a { color: var(--link-text-color); text-decoration: underline; }
a.pt-cite { text-decoration: none !important; font-weight: 700; font-size: .82em;
  color: var(--color-accent) !important; cursor: pointer; padding: 0 1px; }
a.pt-cite:hover { text-decoration: underline !important; }
.pt-unsupported { background: rgba(239, 68, 68, .12); border-bottom: 2px dotted #dc2626; }
.pt-weak { border-bottom: 1px dotted var(--body-text-color-subdued); }
.pt-note { font-size: 12px; color: var(--body-text-color-subdued); }
.pt-error { color: #b91c1c; font-weight: 600; }
#pt-report { font-size: 14px; }
#pt-mode { align-self: center; }
#pt-chat table { font-size: 13px; }
.pt-table-wrap { overflow-x: auto; max-width: 100%; margin: 2px 0 6px; }
#pt-chat table.pt-compare { border-collapse: collapse; min-width: 640px; width: 100%;
  line-height: 1.4; }
#pt-chat .pt-compare th, #pt-chat .pt-compare td { vertical-align: top; text-align: left;
  padding: 6px 8px; border: 1px solid var(--border-color-primary); }
#pt-chat .pt-compare thead th { font-size: 11px; text-transform: uppercase;
  letter-spacing: .04em; white-space: nowrap; color: var(--body-text-color-subdued); }
#pt-chat .pt-compare th[scope=row] { white-space: nowrap; font-weight: 600; }
#pt-chat .pt-compare td { min-width: 150px; max-width: 260px; }
#pt-chat .pt-compare td.pt-none { min-width: 0; color: var(--body-text-color-subdued); }
.pt-paper { border-bottom: 1px dotted var(--body-text-color-subdued); cursor: help; }
#pt-chat .pt-compare td span[title] { cursor: help; }
.pt-quotes { margin: 0; }
.pt-quotes dt { font-size: 11px; font-weight: 700; text-transform: uppercase;
  letter-spacing: .04em; color: var(--body-text-color-subdued); margin-top: 4px; }
.pt-quotes dd { margin: 0 0 4px 0; }
.pt-reason { font-size: 13px; color: var(--body-text-color-subdued); }
.pt-filters { font-size: 12px; opacity: .85; }
.pt-similar-btn { font-size: 12px; padding: 1px 10px; border-radius: 999px; cursor: pointer;
  border: 1px solid var(--border-color-primary); background: var(--background-fill-primary);
  color: var(--body-text-color); }
.pt-similar-btn:hover { border-color: var(--color-accent); }
.pt-topic { align-self: flex-start; font-size: 12px; padding: 0 8px; border-radius: 999px;
  background: var(--background-fill-primary); border: 1px solid var(--border-color-primary); }
.pt-topic.pt-same { border-color: var(--color-accent); color: var(--color-accent); }
.pt-similar { border: 1px solid var(--border-color-primary); border-radius: 10px;
  padding: 10px 12px; font-size: 14px; margin-top: 10px; }
.pt-similar-list { margin: 0; padding-left: 20px; }
.pt-similar-list li { margin: 4px 0; }
.pt-similar-list .pt-meta { margin: 2px 0 0; }
.pt-score { font-variant-numeric: tabular-nums; }
.pt-topic-info { font-size: 14px; }
.pt-top-papers { margin: 4px 0 0; padding-left: 20px; font-size: 13px; }
#pt-map-card .pt-card { margin-top: 8px; }
"""

# Citation clicks: show the cited source card (its turn's section, highlighted, scrolled to
# within the sources panel, the page itself stays put). One listener on the document, so it works
# for messages rendered after the page loaded.
# New questions: the chat follows the new turn (scrolled to its answer, though the reader had
# scrolled up to an older turn), until the answer is done or the reader scrolls.
JS = """
function () {
  if (window.__paperTalkCitations) { return; }
  window.__paperTalkCitations = true;
  document.addEventListener("click", function (event) {
    var target = event.target;
    var link = target && target.closest ? target.closest("a.pt-cite, a[href^='#pt-src-']") : null;
    if (!link) { return; }
    event.preventDefault();
    event.stopPropagation();
    var id = (link.getAttribute("href") || "").replace(/^#/, "");
    var card = document.getElementById(id);
    if (!card) { return; }
    var section = card.closest(".pt-turn");
    document.querySelectorAll(".pt-turn").forEach(function (turn) {
      turn.classList.toggle("pt-hidden", turn !== section);
    });
    document.querySelectorAll(".pt-card.pt-active").forEach(function (other) {
      other.classList.remove("pt-active");
    });
    card.classList.add("pt-active");
    var box = document.getElementById("pt-sources-box");
    if (box && box.contains(card) && box.scrollHeight > box.clientHeight) {
      var top = card.getBoundingClientRect().top - box.getBoundingClientRect().top;
      box.scrollTo({top: box.scrollTop + top - 8, behavior: "smooth"});
    } else {
      card.scrollIntoView({behavior: "smooth", block: "nearest"});
    }
  }, true);

  function followNewTurns() {
    var chat = document.getElementById("pt-chat");
    if (!chat) { setTimeout(followNewTurns, 250); return; }
    var asked = chat.querySelectorAll("[data-testid=user]").length;
    var following = false;
    function stop() { following = false; }
    ["wheel", "touchstart"].forEach(function (name) {
      chat.addEventListener(name, stop, {passive: true});
    });
    function show() {
      var wrap = chat.querySelector(".bubble-wrap");
      var questions = chat.querySelectorAll("[data-testid=user]");
      if (!wrap || !questions.length) { return; }
      var question = questions[questions.length - 1];
      // To the end of the answer, but never past the top of its question.
      var bottom = wrap.scrollHeight - wrap.clientHeight;
      var offset = question.getBoundingClientRect().top - wrap.getBoundingClientRect().top;
      wrap.scrollTop = Math.max(0, Math.min(bottom, wrap.scrollTop + offset - 8));
      var rect = chat.getBoundingClientRect();
      if (rect.top < 0 || rect.bottom > window.innerHeight) {
        chat.scrollIntoView({block: "nearest"});
      }
    }
    new MutationObserver(function () {
      var count = chat.querySelectorAll("[data-testid=user]").length;
      if (count > asked) { following = true; }
      asked = count;
      if (!following) { return; }
      show();
      var answers = chat.querySelectorAll("[data-testid=bot]");
      var last = answers.length ? answers[answers.length - 1] : null;
      if (answers.length >= count && last && last.querySelector(".pt-note, .pt-error")) {
        following = false;  // the answer is complete
      }
    }).observe(chat, {childList: true, subtree: true, characterData: true});
  }
  followNewTurns();

  // The map and the cards talk to the server through hidden textboxes: a clicked point
  // (#pt-point-id) and a card's "Similar papers" (#pt-similar-id). "ID|tab|time" makes each send
  // a change, so the same paper can be asked for again.
  function send(id, paperId, origin) {
    var box = document.querySelector("#" + id + " textarea, #" + id + " input");
    if (!box || !paperId) { return; }
    var proto = box.tagName === "TEXTAREA" ? HTMLTextAreaElement.prototype
      : HTMLInputElement.prototype;
    var setter = Object.getOwnPropertyDescriptor(proto, "value").set;
    setter.call(box, [paperId, origin, Date.now()].join("|"));
    box.dispatchEvent(new Event("input", {bubbles: true}));
  }
  document.addEventListener("click", function (event) {
    var target = event.target;
    var button = target && target.closest ? target.closest(".pt-similar-btn") : null;
    if (!button) { return; }
    event.preventDefault();
    var onMap = !!button.closest("#pt-tab-map, #pt-map-card, #pt-map-similar");
    send("pt-similar-id", button.getAttribute("data-paper") || "", onMap ? "map" : "chat");
    var panel = onMap ? "pt-map-similar" : "pt-similar-box";
    var tries = 0;
    var reveal = setInterval(function () {
      var box = document.getElementById(panel);
      tries += 1;
      if (box && box.querySelector(".pt-similar, .pt-error")) {
        box.scrollIntoView({behavior: "smooth", block: "nearest"});
        clearInterval(reveal);
      } else if (tries > 40) { clearInterval(reveal); }
    }, 100);
  });
  // Plotly's module (4.6 MB, ~2 s to evaluate on a slow machine) is fetched by the page's head
  // (modulepreload, see `head`) and evaluated as soon as the page runs, so opening the Map tab
  // only draws (the file name comes from ui/app.py).
  var plotlyModule = PLOTLY_MODULE;
  if (plotlyModule) {
    var base = location.href.split("#")[0].split("?")[0].replace(/[^/]*$/, "");
    import(new URL("assets/" + plotlyModule, base).href).catch(function () {});
  }
  setInterval(function () {  // bind clicks on map points once the plot is drawn
    var plot = document.querySelector("#pt-map-plot .js-plotly-plot");
    if (!plot || plot.__paperTalkBound || typeof plot.on !== "function") { return; }
    plot.__paperTalkBound = true;
    plot.on("plotly_click", function (data) {
      var point = data && data.points && data.points[0];
      if (point && point.customdata != null) {
        send("pt-point-id", String(point.customdata), "map");
      }
    });
  }, 300);
}
"""


def head(plotly_module: str | None = None) -> str:
    """The page's <head> additions: fetch (and compile) plotly's module while Gradio's own
    scripts load, instead of when the Map tab first needs it."""
    if not plotly_module:
        return ""
    return f'<link rel="modulepreload" href="assets/{html.escape(plotly_module)}">'


def script(plotly_module: str | None = None) -> str:
    """The page's script; `plotly_module`: the file name of Gradio's plotly chunk under
    `assets/`, evaluated as soon as the page runs (None: loaded when the map opens)."""
    return JS.replace("PLOTLY_MODULE", json.dumps(plotly_module or ""))
