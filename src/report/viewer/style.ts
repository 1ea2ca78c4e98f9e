// The page's style: plain CSS, no dependency.
// Plain browser JavaScript inside the viewer's one function (see ../viewer.ts).
export const STYLE = `
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#111827;background:#f9fafb}
main{max-width:1240px;margin:0 auto;padding:20px}
h1{font-size:22px;margin:0 0 4px;overflow-wrap:anywhere}h2{font-size:16px;margin:0 0 10px}
.sub{color:#6b7280;margin:0 0 12px}
nav{display:flex;gap:4px;flex-wrap:wrap;border-bottom:1px solid #e5e7eb;margin-bottom:16px}
nav a{padding:6px 12px;color:#374151;text-decoration:none;border-radius:6px 6px 0 0}
nav a[aria-selected=true]{background:#fff;border:1px solid #e5e7eb;border-bottom-color:#fff;margin-bottom:-1px;color:#111827;font-weight:600}
kbd{font:11px ui-monospace,Menlo,monospace;border:1px solid #d1d5db;border-radius:3px;padding:0 3px;color:#6b7280;background:#f9fafb}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:14px;margin-bottom:16px;min-width:0}
.empty{border-color:#f59e0b;background:#fffbeb}
svg.chart{width:100%;height:auto;max-width:860px;display:block}
svg .tick{font-size:11px;fill:#6b7280}svg .axis{font-size:12px;fill:#374151}
.legend{font-size:13px;display:flex;gap:14px;flex-wrap:wrap}
.metrics{display:grid;grid-template-columns:repeat(auto-fill,minmax(280px,1fr));gap:12px}
.metric{margin:0;min-width:0}.metric figcaption{font-weight:600;font-size:13px;color:#374151}
.scroll-x{overflow-x:auto}
table{border-collapse:collapse;font-size:13px}
td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #f3f4f6;white-space:nowrap}th{color:#6b7280;font-weight:600}
.job{font-size:12px;border-radius:4px;padding:0 5px;background:#e5e7eb}.job.completed{background:#dcfce7}.job.failed{background:#fee2e2}
.controls{display:flex;gap:10px;flex-wrap:wrap;align-items:center;margin-bottom:10px}
.controls label{color:#374151;display:flex;gap:4px;align-items:center;flex-wrap:wrap;min-width:0;max-width:100%}.controls select{min-width:0;text-overflow:ellipsis}
select,button,input{font:inherit;padding:2px 6px;max-width:100%}input.num{width:5.5em}
.group{border:1px solid #e5e7eb;border-radius:8px;padding:10px;margin:10px 0}
.group.nosignal{background:#f9fafb;border-style:dashed}
.group-head{display:flex;gap:10px;flex-wrap:wrap;align-items:baseline;margin-bottom:8px}
.scenario{font-weight:600;overflow-wrap:anywhere}
.flag{font-size:11px;font-weight:600;border-radius:4px;padding:0 6px;background:#fef3c7;color:#92400e}
.flag.err{background:#fee2e2;color:#991b1b}.flag.ok{background:#dcfce7;color:#166534}
.psession{border-top:2px solid #e5e7eb;padding-top:6px;margin-top:10px}.psession-head{font-size:14px;margin:0 0 4px;overflow-wrap:anywhere}
details.ptraj{border:1px solid #e5e7eb;border-radius:6px;padding:6px 10px;margin:6px 0;background:#fff;min-width:0}
details.ptraj>summary{cursor:pointer;display:flex;gap:8px;flex-wrap:wrap;align-items:baseline}
.replay-pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:12px;align-items:start}
.replays .replay{border-left:3px solid #c7d2fe;padding:2px 8px;margin:6px 0}
.replay-samples{margin:4px 0;padding-left:20px}
.replay-sample{margin:2px 0}
#p-infra table td.num{text-align:right}
.pid{font:12px ui-monospace,Menlo,monospace;overflow-wrap:anywhere}.preward{font-size:13px}
.fb{border-left:3px solid #c7d2fe;padding:2px 8px;margin:6px 0}.fb-head{display:flex;gap:8px;flex-wrap:wrap;align-items:baseline}
.comment{background:#f9fafb;border-radius:4px;padding:4px 6px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(230px,1fr));gap:8px}
.tcard{display:block;text-align:left;background:#fff;border:1px solid #e5e7eb;border-left:5px solid #d1d5db;border-radius:6px;padding:6px 8px;cursor:pointer;min-width:0;font:inherit;color:inherit}
.tcard:hover{border-color:#93c5fd}.tcard.cursor{outline:2px solid #2563eb}
.tcard .nums{font-size:12px;color:#374151;display:flex;gap:8px;flex-wrap:wrap}
.tcard .preview{font-size:12px;color:#4b5563;margin-top:4px;overflow-wrap:anywhere;max-height:6.2em;overflow:hidden;white-space:pre-wrap}
.pos{color:#15803d;font-weight:600}.neg{color:#b91c1c;font-weight:600}.zero{color:#6b7280}
.chip{display:inline-block;font:11px ui-monospace,Menlo,monospace;background:#eef2ff;color:#3730a3;border-radius:4px;padding:0 4px;margin:1px 2px 0 0}
.history{border-top:2px solid #e5e7eb;margin-top:14px;padding-top:8px}
.history h3{font-size:14px;margin:0 0 4px}
.msg{border:1px solid #e5e7eb;border-left:4px solid #d1d5db;border-radius:6px;padding:8px 10px;margin:8px 0;background:#fff;min-width:0}
.msg.trained{border-left-color:#16a34a;background:#f0fdf4}.msg[data-role=tool]{border-left-color:#6366f1}
.msg[data-role=system]{border-left-color:#9ca3af;background:#f9fafb}
.role{font-weight:600;font-size:12px;text-transform:uppercase;color:#6b7280;margin-right:8px}
.badge{display:inline-block;font-size:11px;font-weight:600;color:#fff;background:#16a34a;border-radius:4px;padding:0 6px;margin-right:6px}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin-top:2px}
.tok{border-radius:3px;box-decoration-break:clone;-webkit-box-decoration-break:clone}
.tok.tid{font:11px ui-monospace,Menlo,monospace;padding:0 2px;margin:1px;display:inline-block}
.tok.end{font-size:11px;color:#374151;padding:0 3px}
.tokens{margin-top:6px;line-height:1.9;overflow-wrap:anywhere;white-space:pre-wrap}
.call{font-family:ui-monospace,Menlo,monospace;font-size:13px;color:#1f2937;margin-top:6px;overflow-wrap:anywhere;white-space:pre-wrap}
.result{font-family:ui-monospace,Menlo,monospace;font-size:12px;color:#4338ca;margin:2px 0 0 16px;overflow-wrap:anywhere;white-space:pre-wrap}
pre.raw{background:#f3f4f6;border-radius:4px;padding:6px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:320px;overflow:auto;margin:4px 0}
.meta{color:#4b5563;font-size:13px;margin:4px 0;overflow-wrap:anywhere}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:0 12px;font-size:13px;margin:4px 0}
dl.kv dt{color:#6b7280}dl.kv dd{margin:0;overflow-wrap:anywhere}
.legend-scale{display:inline-flex;gap:2px;vertical-align:middle;margin:0 6px}
.legend-scale span{width:18px;height:12px;border-radius:2px;display:inline-block}
.cmp-row{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:10px;border-top:1px solid #e5e7eb;padding:8px 0}
.cmp-row h3{grid-column:1/-1;font-size:14px;margin:0}
.cmp-side{min-width:0}
.answer{border:1px solid #e5e7eb;border-radius:6px;padding:4px 8px;margin:4px 0;font-size:13px;white-space:pre-wrap;overflow-wrap:anywhere;cursor:pointer}
.answer:hover{border-color:#93c5fd}
.badge.eval{background:#6b7280}.msg.evaluated{border-left-color:#6b7280;background:#f9fafb}
.flag.eval{background:#e5e7eb;color:#374151}.flag.skip{background:#ede9fe;color:#5b21b6}
.more-text{display:inline-block;margin-left:6px;font-size:12px;color:#1d4ed8;background:#eff6ff;border:1px solid #bfdbfe;border-radius:4px;cursor:pointer}
.live{font-size:11px;font-weight:600;color:#fff;background:#16a34a;border-radius:4px;padding:0 6px}.live.off{background:#b91c1c}
td.run{text-align:left;max-width:16em;overflow:hidden;text-overflow:ellipsis}
@media (max-width:640px){main{padding:10px}.cmp-row{grid-template-columns:minmax(0,1fr)}td,th{padding:2px 6px}nav a{padding:6px 8px}}
`;
