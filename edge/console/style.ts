// The console's stylesheet, served as /console/console.css (the CSP allows no inline style). Readable
// at 1280 px and on a phone: tables scroll sideways inside their box rather than the page.
export const CONSOLE_CSS = `
:root { --fg: #1d2330; --muted: #5d6678; --line: #d9dee7; --bg: #f7f8fa; --card: #fff; --accent: #2457c5;
  --ok: #1f7a3d; --behind: #a86400; --late: #b3261e; --rows: #2457c5; --rejects: #c2410c; --lag: #7c3aed; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
body.loading #view { opacity: .55; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 12px 24px; padding: 10px 20px; background: #111827; color: #fff; }
header a { color: #fff; text-decoration: none; }
.brand { font-weight: 700; font-size: 16px; }
.brand span { font-weight: 400; opacity: .7; }
nav { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; flex: 1; }
nav[hidden] { display: none; }
#who { margin-left: auto; opacity: .75; font-size: 12px; }
main { max-width: 1240px; margin: 0 auto; padding: 16px 20px 48px; }
h1 { font-size: 22px; margin: 8px 0 12px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
a { color: var(--accent); }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.code { background: #0f172a; color: #e2e8f0; padding: 10px 12px; border-radius: 6px; overflow-x: auto; white-space: pre; }
.crumbs { margin: 0; color: var(--muted); }
.scroll { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 6px; }
table.list { border-collapse: collapse; width: 100%; }
table.list th, table.list td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; white-space: nowrap; }
table.list th { font-weight: 600; color: var(--muted); background: #f1f3f7; }
table.list tr:last-child td { border-bottom: 0; }
table.list tr.current td { background: #eef4ff; }
td code.row { white-space: pre-wrap; word-break: break-all; display: inline-block; max-width: 48ch; }
.num { text-align: right !important; font-variant-numeric: tabular-nums; }
.warn { color: var(--rejects); font-weight: 600; }
.empty { color: var(--muted); }
.state { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 12px; background: #e5e7eb; }
.state.active { background: #dcfce7; color: var(--ok); }
.state.disabled, .state.error { background: #fee2e2; color: var(--late); }
.reason { color: var(--late); }
.lag.ok { color: var(--ok); }
.lag.behind { color: var(--behind); font-weight: 600; }
.lag.late { color: var(--late); font-weight: 700; }
.alert { background: #fef2f2; border: 1px solid #fecaca; color: var(--late); padding: 8px 12px; border-radius: 6px; }
.alert[hidden] { display: none; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 12px; }
dl.card { margin: 0; padding: 12px 14px; background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; }
dl.card dt { color: var(--muted); }
dl.card dd { margin: 0; overflow-wrap: anywhere; }
svg.spark polyline { fill: none; stroke: var(--rows); stroke-width: 1.5; }
figure.chart { margin: 8px 0 16px; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
figure.chart svg { width: 100%; height: auto; display: block; }
figure.chart rect.rows { fill: var(--rows); }
figure.chart rect.rejects { fill: var(--rejects); }
figure.chart rect.lag { fill: var(--lag); }
figure.chart .axis { stroke: var(--line); }
figure.chart .tick { font-size: 10px; fill: var(--muted); }
figure.chart .tick.end { text-anchor: end; }
figcaption { display: flex; gap: 16px; font-size: 12px; color: var(--muted); }
.key::before { content: ""; display: inline-block; width: 10px; height: 10px; margin-right: 5px; border-radius: 2px; vertical-align: -1px; }
.key.rows::before { background: var(--rows); }
.key.rejects::before { background: var(--rejects); }
.key.lag::before { background: var(--lag); }
form { margin: 10px 0; }
form.inline { display: flex; flex-wrap: wrap; align-items: end; gap: 8px 12px; }
.new-key { margin: 10px 0; padding: 8px; border: 1px solid var(--line); border-radius: 5px; }
.new-key code { word-break: break-all; margin-right: 8px; }
label { display: flex; flex-direction: column; gap: 2px; font-size: 12px; color: var(--muted); }
input, select, button { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 5px; background: #fff; color: var(--fg); }
button { cursor: pointer; background: #eef2fb; border-color: #c8d3ec; }
button.danger { background: #fdecec; border-color: #f4b4b4; color: var(--late); }
button.copied { background: #dcfce7; }
#sign-in { max-width: 520px; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 16px 20px; }
#sign-in[hidden] { display: none; }
#sign-in input { width: 100%; }
#actions { margin-top: 24px; padding-top: 8px; border-top: 1px solid var(--line); }
ol.rows { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 8px 8px 8px 40px; overflow-x: auto; }
ol.rows code { white-space: pre; }
.pager { display: flex; gap: 16px; }
@media (max-width: 640px) {
  main { padding: 12px; }
  header { padding: 8px 12px; }
  #who { display: none; }
  dl.card { grid-template-columns: 1fr; }
  dl.card dd { margin-bottom: 6px; }
  /* A list of sinks or warehouses becomes one card per row, each cell with its column's name. */
  table.stack thead { display: none; }
  table.stack tr { display: block; padding: 6px 0; border-bottom: 1px solid var(--line); }
  table.stack tr:last-child { border-bottom: 0; }
  table.stack td { display: flex; justify-content: space-between; gap: 12px; padding: 2px 10px; border: 0; white-space: normal; }
  table.stack td::before { content: attr(data-label); color: var(--muted); font-weight: 600; }
}
`
