#!/usr/bin/env node
// SPEC §6's splits of a table file under Node, the same file `arenalite splits` writes:
//
//   node bin/make_splits.mjs PATH --target COL [--task T] [--group-column COL]
//        [--time-column COL] [--leakage-columns A,B] [--categorical A,B]
//        [--kind adaptive|kfold|random] [--n-repeats N] [--n-folds N]
//        [--test-fraction F] [--gap GAP] [--group-labels per_sample|per_group] [-o DIR]
//
// writes DIR/<name>.splits.json (DIR defaults to arenalite-out, as the Python CLI's) and
// prints its path. The table is read as the page reads a picked file (bin/table_file.mjs,
// src/table/), the splits made by src/make_splits.js. A mistake prints one line
// "make_splits: error: ..." with the Python loader's words and exits with 2.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readTableFile } from "./table_file.mjs";
import { fingerprint } from "../src/table/fingerprint.js";
import { makeSplits, toJson } from "../src/make_splits.js";

const USAGE = "usage: node bin/make_splits.mjs PATH --target COL [--task T] [--group-column COL] " +
  "[--time-column COL] [--leakage-columns A,B] [--categorical A,B] [--kind adaptive|kfold|random] " +
  "[--n-repeats N] [--n-folds N] [--test-fraction F] [--gap GAP] " +
  "[--group-labels per_sample|per_group] [-o DIR]";
const FLAGS = {
  "--target": "target", "--task": "task", "--group-column": "groupColumn",
  "--time-column": "timeColumn", "--leakage-columns": "leakageColumns",
  "--categorical": "categorical", "--kind": "kind", "--n-repeats": "nRepeats",
  "--n-folds": "nFolds", "--test-fraction": "testFraction", "--gap": "gap",
  "--group-labels": "groupLabels", "-o": "output", "--output": "output",
};
const CHOICES = { task: ["binary", "multiclass", "regression"], kind: ["adaptive", "kfold", "random"],
  groupLabels: ["per_sample", "per_group"] };

class UsageError extends Error {}

function wholeNumber(flag, text) {
  if (!/^[+-]?\d+$/.test(text.trim())) throw new UsageError(`argument ${flag}: invalid int value: '${text}'`);
  return Number(text);
}

/** argv → {path, flags}, as argparse reads `arenalite splits`' flags. */
export function parseArgs(argv) {
  const flags = { output: "arenalite-out" };
  const paths = [];
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value = null;
    if (arg.startsWith("--") && arg.includes("=")) [arg, value] = [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)];
    if (arg === "-h" || arg === "--help") throw new UsageError(USAGE);
    if (!(arg in FLAGS)) {
      if (arg.startsWith("-")) throw new UsageError(`unrecognized arguments: ${arg}`);
      paths.push(arg);
      continue;
    }
    if (value === null) {
      if (i + 1 >= argv.length) throw new UsageError(`argument ${arg}: expected one argument`);
      value = argv[++i];
    }
    const key = FLAGS[arg];
    if (CHOICES[key] && !CHOICES[key].includes(value)) {
      throw new UsageError(`argument ${arg}: invalid choice: '${value}' (choose from ` +
        `${CHOICES[key].map((c) => `'${c}'`).join(", ")})`);
    }
    if (key === "nRepeats" || key === "nFolds") flags[key] = wholeNumber(arg, value);
    else if (key === "testFraction") flags[key] = Number(value);
    else if (key === "leakageColumns" || key === "categorical") flags[key] = value.split(",").filter(Boolean);
    else flags[key] = value;
  }
  if (paths.length !== 1) throw new UsageError(`${USAGE}\n(one table file, got ${paths.length})`);
  return { path: paths[0], flags };
}

/** The splits file's text for a table file and flags (what `arenalite splits` writes). */
export async function splitsFileText(path, flags) {
  const table = await readTableFile(path, {
    target: flags.target ?? null, task: flags.task ?? null, groupColumn: flags.groupColumn ?? null,
    timeColumn: flags.timeColumn ?? null, leakageColumns: flags.leakageColumns ?? [],
    categorical: flags.categorical ?? [],
  });
  const warnings = [];
  const splits = makeSplits({
    nRows: table.nRows, task: table.task, y: table.y, groups: table.groups, time: table.time,
    timeKind: table.timeKind ?? undefined, dataset: table.name, groupColumn: table.groupColumn,
    timeColumn: table.timeColumn, targetColumn: table.target,
    leakageColumns: table.excludedColumns.filter((c) => c !== table.groupColumn && c !== table.timeColumn),
    kind: flags.kind === "adaptive" ? null : flags.kind ?? null, nRepeats: flags.nRepeats ?? null,
    nFolds: flags.nFolds ?? null, testFraction: flags.testFraction ?? null,
    gap: flags.gap ?? undefined, groupLabels: flags.groupLabels ?? null,
    warnRowOrder: true, warnings,
  });
  splits.fingerprint = await fingerprint(table);
  return { name: table.name, text: toJson(splits), warnings };
}

async function main(argv) {
  const { path, flags } = parseArgs(argv);
  const { name, text, warnings } = await splitsFileText(path, flags);
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  await mkdir(flags.output, { recursive: true });
  const out = join(flags.output, `${name}.splits.json`);
  await writeFile(out, text);
  process.stdout.write(`${out}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    await main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`make_splits: error: ${err.message ?? err}\n`);
    process.exitCode = 2;
  }
}
