package report

// pageHTML is the template of Dedup's page: one file, inline CSS, inline
// SVG, no scripts (folding uses <details>).
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.D.Title}}</title>
<style>
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2430; margin: 0; background: #f6f7f9; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 60px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 20px; margin: 36px 0 10px; border-bottom: 1px solid #d5d9e0; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 22px 0 6px; overflow-wrap: anywhere; }
.sub { color: #5a6372; margin: 0 0 12px; }
.grid { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
.card { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 12px 16px; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 3px 12px 3px 0; vertical-align: top; }
th { font-weight: 600; color: #3a4352; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.indent td:first-child { padding-left: 18px; color: #4a5262; }
.bad { color: #b00020; font-weight: 600; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
svg { max-width: 100%; height: auto; display: block; margin: 0 auto; }
.two { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 0 28px; }
.plot { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 8px; margin: 8px 0; }
.note { color: #5a6372; font-size: 14px; }
.members td { padding-right: 18px; }
table.members { margin: 0 12px 8px; }
details { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; margin: 4px 0; }
summary { cursor: pointer; padding: 3px 12px; font-size: 14px; font-weight: 600; overflow-wrap: anywhere; }
summary code { font-size: 12.5px; }
summary .note { font-weight: 400; }
details.more { border: 0; border-radius: 0; margin: 0; border-top: 1px solid #e3e6eb; }
details.more > summary { font-weight: 400; font-size: 13px; color: #3a5a8c; padding: 4px 12px; }
.text { padding: 6px 12px 8px; font-size: 14px; overflow-wrap: anywhere; }
.text details.more { margin-top: 6px; }
.text details.more > summary { padding: 4px 0; }
.pad { padding: 0 12px; margin: 6px 0; }
table.diff { width: 100%; table-layout: fixed; border-top: 1px solid #e3e6eb; }
table.diff th { background: #f0f2f5; padding: 6px 10px; font-size: 13px; width: 50%; overflow-wrap: anywhere; }
table.diff td { padding: 6px 10px; border-bottom: 1px solid #eef0f3; font-size: 14px; overflow-wrap: anywhere; width: 50%; }
table.diff td + td, table.diff th + th { border-left: 1px solid #e3e6eb; }
tr.skip td { text-align: center; color: #7a8291; background: #fafbfc; font-size: 12px; padding: 2px; }
.del { background: #ffd7d5; color: #82071e; text-decoration: line-through; text-decoration-color: #c0392b80; }
.ins { background: #ccf0d4; color: #0b5a1f; }
.tag { display: inline-block; font-size: 12px; border-radius: 10px; padding: 0 8px; background: #e8ecf2; color: #3a4352; margin-left: 6px; font-weight: 500; }
.tag.warn { background: #ffe8c2; color: #7a4b00; }
</style>
</head>
<body>
<main>
<h1>{{.D.Title}}</h1>
{{with .D.Inputs}}<p class="sub">Inputs: {{range $i, $in := .}}{{if $i}}, {{end}}<code>{{$in}}</code>{{end}}</p>{{end}}

<h2>Summary</h2>
<div class="grid">
<div class="card">
<table>
<tr><th>Records</th><th class="n">count</th><th class="n">share</th></tr>
{{range .Records}}<tr{{if .Indent}} class="indent"{{end}}><td>{{.Name}}</td><td class="n">{{num .N}}</td><td class="n">{{pct .Pct}}</td></tr>
{{end}}</table>
{{if not .Balanced}}<p class="bad">read ≠ kept + duplicates + rejected</p>{{end}}
</div>
<div class="card">
<table>
<tr><th>Work</th><th class="n"></th></tr>
{{with .D.Summary}}<tr><td>input bytes read (as stored)</td><td class="n">{{bytes .Bytes}}</td></tr>
<tr><td>candidate pairs checked</td><td class="n">{{num .Candidates}}</td></tr>
<tr><td>verified pairs</td><td class="n">{{num .Pairs}}</td></tr>
<tr><td>clusters</td><td class="n">{{num .Clusters}}</td></tr>
<tr><td>largest cluster</td><td class="n">{{num .Largest}}</td></tr>
<tr><td>verification</td><td class="n">{{if .ExactVerification}}exact Jaccard{{else}}sketch estimate{{end}}</td></tr>
<tr><td>warnings</td><td class="n">{{num .Warnings}}</td></tr>
<tr><td>skipped inputs</td><td class="n">{{num .Skipped}}</td></tr>{{end}}
</table>
</div>
{{if .D.Stages}}<div class="card">
<table>
<tr><th>Stage</th><th class="n">time</th><th class="n">items</th><th class="n">rate</th></tr>
{{range .D.Stages}}<tr><td>{{.Name}}</td><td class="n">{{secs .Seconds}}</td><td class="n">{{num .Items}}</td><td class="n">{{rate .Items .Seconds}}</td></tr>
{{end}}<tr><th>total</th><td class="n">{{secs .D.Summary.Seconds}}</td><td></td><td></td></tr>
</table>
</div>{{end}}
{{if .D.Config}}<div class="card">
<table>
<tr><th>Configuration</th><th></th></tr>
{{range .D.Config}}<tr><td>{{.Name}}</td><td class="mono">{{.Value}}</td></tr>
{{end}}</table>
</div>{{end}}
</div>

<h2>Similarity of the candidate pairs</h2>
{{if .SimPlot}}<div class="plot">{{.SimPlot}}</div>
<p class="note">Each pair counted once, in bins of 0.01, over the whole range [0, 1]; the dashed line is the threshold. Exact Jaccard of the feature sets where the features were kept in memory, the sketch estimate otherwise; identical bodies apart.
{{if .D.RejectedPairs}}Grey: the candidates that verification rejected, so the gap between near-duplicates and the rest shows.{{else if not .RejectedKnown}}Only verified pairs are shown: the run did not record the similarities of the candidates it rejected.{{end}}</p>
{{else}}<p class="note">No candidate pairs.</p>{{end}}

<div class="two">
<section>
<h2>Cluster sizes</h2>
{{if .SizePlot}}<div class="plot">{{.SizePlot}}</div>
<p class="note">Number of clusters of each size (documents per cluster, kept one included), on a logarithmic scale.</p>
{{else}}<p class="note">No clusters.</p>{{end}}
</section>
{{if .CurvePlot}}<section>
<h2>Detection probability (S-curve)</h2>
<div class="plot">{{.CurvePlot}}</div>
<p class="note">Probability that a pair at Jaccard similarity J shares at least one lookup key under <code>{{.D.Scheme}}</code>: at least m of b supershingles of r samples agree. At the threshold {{.D.Threshold}} it is {{prob .PAtT}}; pairs below the curve's rise are rarely even compared.</p>
</section>{{end}}
</div>

<h2>Example clusters</h2>
{{if not .Examples}}<p class="note">No clusters to show.</p>{{end}}
{{range $ex := .Examples}}{{$ref := "kept"}}{{if .Dropped}}{{$ref = "first"}}{{end}}
<h3>Cluster {{.Cluster}} <span class="tag">{{.Why}}</span><span class="tag">{{num .Size}} documents</span>{{if .Oversize}}<span class="tag warn">oversize</span>{{end}}{{if .Dropped}}<span class="tag">every member dropped</span>{{end}}</h3>
<details class="members">
<summary>{{num (len .Members | inc)}} documents listed <span class="note">— {{$ref}} <code>{{.Kept.Name}}</code>{{if ge .SimLo 0.0}}; similarity to it {{range2 .SimLo .SimHi}}{{end}}</span></summary>
<table class="members">
<tr><th>document</th><th>similarity to {{$ref}}</th></tr>
<tr><td><code>{{.Kept.Name}}</code> <span class="tag">{{$ref}}</span></td><td></td></tr>
{{range .Members}}<tr><td><code>{{.Name}}</code></td><td>{{sim .Similarity .Exact .Identical}}</td></tr>
{{end}}</table>
</details>
{{if .Unlisted}}<p class="note">{{num .Unlisted}} more members are listed in clusters.jsonl.</p>{{end}}
{{range .Diffs}}
<details{{if .Open}} open{{end}}>
<summary><code>{{.Member.Name}}</code> vs {{$ref}} <span class="note">— {{sim .Member.Similarity .Member.Exact .Member.Identical}}{{if not (or .Note .Identical)}}; {{words .Del}} deleted, {{num .Ins}} inserted{{end}}</span></summary>
{{if .Note}}<p class="note pad">{{.Note}}</p>
{{else if .SameAs}}<p class="note pad">Identical to the {{$ref}} document, byte for byte; the text is shown under <code>{{.SameAs}}</code>.</p>
{{else if .Identical}}<p class="note pad">Identical to the {{$ref}} document, byte for byte{{if lt .WordsB .TotB}} (the first {{num .WordsB}} of {{num .TotB}} words){{end}}:</p>
<div class="text">{{.Preview}}{{if .Rest}} …
<details class="more"><summary>Show {{if lt .WordsB .TotB}}more of {{end}}the text ({{num .RestWords}} more words)</summary>{{.Rest}}</details>{{end}}</div>
{{else}}{{if or (lt .WordsA .TotA) (lt .WordsB .TotB)}}<p class="note pad">Diff of the first {{num .WordsA}} of {{num .TotA}} words ({{$ref}}) and {{num .WordsB}} of {{num .TotB}} words (member).</p>
{{end}}{{if .NoDifference}}<p class="note pad">No word-level difference: the texts differ at most in case, punctuation or spacing.</p>
{{end}}<table class="diff">
<tr><th>{{$ref}}: <code>{{$ex.Kept.Name}}</code></th><th><code>{{.Member.Name}}</code></th></tr>
{{template "rows" .Rows}}</table>
{{if .More}}<details class="more"><summary>Show the rest of the diff ({{num .MoreWords}} more words)</summary>
<table class="diff">
{{template "rows" .More}}</table>
</details>
{{end}}{{end}}</details>
{{end}}{{if .NotShown}}<p class="note">{{num .NotShown}} more members not diffed.</p>{{end}}
{{end}}
</main>
</body>
</html>
{{define "rows"}}{{range .}}{{if .Skip}}<tr class="skip"><td colspan="2">⋯ {{num .Skip}} unchanged words ⋯</td></tr>
{{else}}<tr><td>{{range .Left}}{{if .Class}}<span class="{{.Class}}">{{.Text}}</span> {{else}}{{.Text}} {{end}}{{end}}</td><td>{{range .Right}}{{if .Class}}<span class="{{.Class}}">{{.Text}}</span> {{else}}{{.Text}} {{end}}{{end}}</td></tr>
{{end}}{{end}}{{end}}`
