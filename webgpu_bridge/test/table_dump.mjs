// For tests/test_table_js.py: read a table file as the page does and print what the
// loader made of it as JSON (or {"error": message}).
//   node test/table_dump.mjs PATH '{"target": "y", ...}'
import { readTableFile } from "../bin/table_file.mjs";
import { fingerprint } from "../src/table/fingerprint.js";

const plain = (x) => Array.from(x, (v) => (Number.isNaN(v) ? null : v));

try {
  const table = await readTableFile(process.argv[2], JSON.parse(process.argv[3] ?? "{}"));
  const features = table.features.map((f) => (f.kind === "numeric"
    ? { name: f.name, kind: f.kind, values: plain(f.values) }
    : { name: f.name, kind: f.kind, codes: Array.from(f.codes), categories: f.categories }));
  process.stdout.write(JSON.stringify({
    name: table.name, n_rows: table.nRows, task: table.task, classes: table.classes,
    y: plain(table.y), features, missing: table.missing, excluded: table.excludedColumns,
    columns: table.columns, fingerprint: await fingerprint(table),
    time: table.time ? plain(table.time) : null, groups: table.groups,
  }));
} catch (err) {
  process.stdout.write(JSON.stringify({ error: err.message }));
}
