#!/usr/bin/env node
// Prints the code-shape figures issue 14 tracks: the longest functions in src/
// (by line span, nested functions counted on their own too) and the number of
// `as` casts (`as const` excluded: it narrows, it does not override the checker).
// Usage: node scripts/code-metrics.mjs [dir] [--top N]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const topValueIndex = topIndex >= 0 ? topIndex + 1 : -1;
const top = topIndex >= 0 ? Number(args[topValueIndex]) : 10;
if (!Number.isInteger(top) || top < 1) {
  console.error('usage: node scripts/code-metrics.mjs [dir] [--top N]  (N a whole number from 1)');
  process.exit(2);
}
const root = args.find((a, i) => !a.startsWith('--') && i !== topValueIndex) ?? 'src';

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const functions = [];
let casts = 0;
const castsByFile = new Map();
for (const file of files(root)) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const line = (pos) => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node) => {
    if (ts.isAsExpression(node)) {
      const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const';
      if (!isConst) {
        casts += 1;
        castsByFile.set(file, (castsByFile.get(file) ?? 0) + 1);
      }
    }
    if (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node)) {
      const lines = line(node.getEnd()) - line(node.getStart(source)) + 1;
      let name = node.name?.getText(source);
      if (!name && ts.isVariableDeclaration(node.parent)) name = node.parent.name.getText(source);
      if (!name && ts.isPropertyAssignment(node.parent)) name = node.parent.name.getText(source);
      functions.push({ file: relative('.', file), line: line(node.getStart(source)) + 1, name: name ?? '(anonymous)', lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

functions.sort((a, b) => b.lines - a.lines);
console.log(`longest functions in ${root}/:`);
for (const f of functions.slice(0, top)) console.log(`  ${String(f.lines).padStart(4)} lines  ${f.name}  ${f.file}:${f.line}`);
console.log(`functions over 150 lines: ${functions.filter((f) => f.lines > 150).length}`);
console.log(`as casts (excluding as const): ${casts}`);
const byFile = [...castsByFile].sort((a, b) => b[1] - a[1]).slice(0, top);
for (const [file, count] of byFile) console.log(`  ${String(count).padStart(4)}  ${relative('.', file)}`);
