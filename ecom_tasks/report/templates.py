"""The report's page and markdown file as Jinja2 templates (rendered by ``render.py``, whose environments
escape every value: a log's names are data). Only the text written literally below is markup.
"""

from __future__ import annotations

#: The page's only script (our own, static): it records script errors, console.error calls and
#: anything the page's Content-Security-Policy blocked into the page, so a headless browser's
#: --dump-dom shows them, and flags that it ran.
ERROR_PROBE = """window.__reportErrors = [];
window.addEventListener("error", function (e) { window.__reportErrors.push(String(e.message || e)); record(); });
document.addEventListener("securitypolicyviolation", function (e) { window.__reportErrors.push("blocked by the page's policy: " + e.violatedDirective + " " + (e.sample || "")); record(); });
var __consoleError = console.error;
console.error = function () { window.__reportErrors.push(Array.prototype.join.call(arguments, " ")); record(); __consoleError.apply(console, arguments); };
function record() { var n = document.getElementById("report-errors"); if (n) { n.textContent = JSON.stringify(window.__reportErrors); } }
document.addEventListener("DOMContentLoaded", function () { record(); document.body.setAttribute("data-report-ready", "1"); });"""

STYLE = """body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 2rem; color: #1d232a; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #ccd; }
h3 { font-size: 1.02rem; margin-top: 1.6rem; }
table { border-collapse: separate; border-spacing: 0; font-size: 0.82rem; margin: 0.4rem 0 0.8rem; }
th, td { border: 1px solid #d6dae0; border-width: 0 1px 1px 0; padding: 0.18rem 0.5rem; white-space: nowrap; background: #fff; }
tr > :first-child { border-left-width: 1px; } thead th { border-top-width: 1px; }
div.table { overflow-x: auto; max-width: 100%; }
th { background: #eef1f5; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.headline, td.headline { font-weight: 600; background: #f3f7ee; }
/* The model column stays in view while a wide table scrolls; the Averages follow it. */
th:first-child, td:first-child { position: sticky; left: 0; z-index: 1; }
td:first-child { max-width: 20rem; overflow: hidden; text-overflow: ellipsis; }
td.model { min-width: 15rem; } div.flags { white-space: normal; }
tr.ref td { color: #5b6470; font-style: italic; background: #fafafa; }
tr.failed td { color: #8a1f11; background: #fff1ef; }
tr.flagged td:first-child { box-shadow: inset 4px 0 0 #d98a00; }
tr.ref td.src::before { content: "reference "; font-style: normal; font-size: 0.7rem; background: #e4e0f5; padding: 0 0.3rem; border-radius: 0.2rem; margin-right: 0.2rem; }
span.flag { display: inline-block; font-size: 0.72rem; background: #fff0c2; color: #6b4a00; border: 1px solid #e6c84a; border-radius: 0.2rem; padding: 0 0.3rem; margin-right: 0.2rem; }
span.flag.unreliable { background: #ffe0dc; color: #8a1f11; border-color: #e08b80; }
p.note { font-size: 0.8rem; color: #4a5360; max-width: 60rem; }
.notice { background: #fff6d6; border: 1px solid #e6c84a; padding: 0.5rem; }
img { max-width: 100%; display: block; margin: 0.4rem 0 1rem; }
nav a { margin-right: 0.8rem; } #report-errors { display: none; }"""

HTML = """{% macro grid(table) %}
<div class="table"><table><thead><tr>
{% for header in table.headers %}<th{% if header.css %} class="{{ header.css }}"{% endif %}>{{ header.text }}</th>{% endfor %}
</tr></thead><tbody>
{% for row in table.rows %}
<tr{% if row.css %} class="{{ row.css }}"{% endif %}>{% for cell in row.cells %}<td{% if cell.css %} class="{{ cell.css }}"{% endif %}{% if cell.title %} title="{{ cell.title }}"{% endif %}>{{ cell.text }}{% if cell.flags %}<div class="flags">{% for flag in cell.flags %}<span class="flag {{ flag.css }}">{{ flag.text }}</span>{% endfor %}</div>{% endif %}</td>{% endfor %}</tr>
{% endfor %}
</tbody></table></div>
{% endmacro %}
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ecom-tasks report</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{{ probe_sha256 }}'">
<script>{{ probe }}</script>
<style>{{ style }}</style>
</head><body>
<div id="report-errors">[]</div>
<h1>ecom-tasks report</h1>
<p>{{ summary }} Rows marked <em>reference</em> are the papers' published numbers, not our runs.
{% if fixture_rows %}Rows flagged <span class="flag">{{ fixture_flag }}</span> ran on the bundled fixtures, which exist to exercise the pipeline: their numbers say nothing about a model.{% endif %}
{{ flags_text }}</p>
{% if notice %}
<p class="notice">{{ notice }}</p>
{% endif %}
<nav>{% for section in sections %}<a href="#{{ section.anchor }}">{{ section.title }}</a>{% endfor %}<a href="#runs">Runs</a></nav>
{% for section in sections %}
<h2 id="{{ section.anchor }}">{{ section.title }}</h2>
{% for table in section.tables %}
<h3 id="{{ table.anchor }}">{{ table.title }}</h3>
<p class="note">{{ table.unit }}.{% if table.note %} {{ table.note }}{% endif %}</p>
{{ grid(table) }}
{% if table.image %}
<img alt="{{ table.title }}" src="{{ table.image }}">
{% endif %}
{% endfor %}
{% endfor %}
<h2 id="runs">Runs</h2>
{{ grid(runs) }}
<p class="note">Runs with identical benchmark, task, framework, model and settings are one row: its numbers are the latest successful run's; 'runs merged' counts them and 'differing metrics' names any metric on which they disagree. Unfinished or failed runs, and the stages of a data build (ecom-tasks build), are listed here and never enter a table. 'model in tables': the name the tables use (the same model under both frameworks' spellings is one name; the README states the rule).</p>
</body></html>
"""

#: What a row's flags say (both templates show it under the summary).
FLAGS_TEXT = (
    "A row's flags stand beside its numbers: a run made with --limit (part of the data), the share of replies "
    "that were invalid, cut off by the token limit, over the server's context or otherwise failed whenever it is "
    "above 0, a truncation share lm-eval cannot know (it passes no stop reason), and recall@K over a pool of K "
    "items or fewer."
)

#: ``{{ }}`` values are escaped for markdown by the environment; ``cells`` joins a row's escaped cells.
MARKDOWN = """# ecom-tasks report

{{ summary }}
Rows marked `paper` are the papers' published numbers (reference rows), not our runs.
{% if fixture_rows %}
Rows flagged "{{ fixture_flag }}" ran on the bundled fixtures, which exist to exercise the pipeline: their numbers say nothing about a model.
{% endif %}
{{ flags_text }}

{% if notice %}

> {{ notice }}
{% endif %}
{% for section in sections %}

## {{ section.title }}
{% for table in section.tables %}

### {{ table.title }}

_{{ table.unit }}._{% if table.note %} {{ table.note }}{% endif %}


|{% for header in table.headers %} {{ header.text }} |{% endfor %}

|{% for header in table.headers %}{% if header.numeric %}---:{% else %}---{% endif %}|{% endfor %}

{% for row in table.rows %}
|{% for cell in row.cells %} {{ cell.text }} |{% endfor %}

{% endfor %}
{% if table.image %}

![{{ table.title }}]({{ table.image }})
{% endif %}
{% endfor %}
{% endfor %}

## Runs

|{% for header in runs.headers %} {{ header.text }} |{% endfor %}

|{% for header in runs.headers %}{% if header.numeric %}---:{% else %}---{% endif %}|{% endfor %}

{% for row in runs.rows %}
|{% for cell in row.cells %} {{ cell.text }} |{% endfor %}

{% endfor %}
{% if disagreeing %}

Merged runs whose numbers differ (the latest is shown):
{% for run in disagreeing %}
- {{ run.task }} [{{ run.framework }}] {{ run.model }}: {{ run.disagree | join(", ") }}
{% endfor %}
{% endif %}
{% if failed %}

Unfinished or failed runs (not in any table):
{% for run in failed %}
- {{ run.status }}: {{ run.task }} [{{ run.framework }}] {{ run.model }} ({{ run.source }}){% if run.error %}: {{ run.error }}{% endif %}

{% endfor %}
{% endif %}
"""
