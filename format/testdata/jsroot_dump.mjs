// Dumps every entry of a tree, every branch, as one JSON line, with
// JSROOT (the reader of ROOT's web tools), for TestJSROOT. Usage:
//   node jsroot_dump.mjs FILE TREE
// JSROOT is found by the NODE_PATH the test sets.
import { openFile } from 'jsroot/io';
import { TSelector, treeProcess } from 'jsroot/tree';

const [name, treeName] = process.argv.slice(2);
const file = await openFile(name);
const tree = await file.readObject(treeName);
const branches = tree.fBranches.arr.map(b => b.fName);
const sel = new TSelector();
for (const b of branches) sel.addBranch(b);
const out = [];
sel.Process = function () {
  const row = {};
  for (const b of branches) {
    const v = this.tgtobj[b];
    row[b] = ArrayBuffer.isView(v) || Array.isArray(v) ? Array.from(v, Number) : (typeof v === 'bigint' ? Number(v) : v);
  }
  out.push(JSON.stringify(row));
};
const done = await treeProcess(tree, sel);
if (!done) throw new Error('treeProcess failed');
process.stdout.write(out.join('\n') + '\n');
