// Model Explorer's own graph worker (its layout engine, from the pip package's
// web app) run in Node on a graph xlac wrote: does the viewer take it, group the
// kernels and lay them out? Used by test/support/model_explorer_check.sh.
//
//   node model_explorer_layout.js <web_app/worker-*.js> <fusion_graph.json>
const fs = require('fs');
const vm = require('vm');
const [workerPath, graphPath] = process.argv.slice(2);
const collection = JSON.parse(fs.readFileSync(graphPath, 'utf8'));
const graph = collection.graphs[0];
let handler = null;
const messages = [];
class Ctx { measureText(t) { return { width: 6.5 * String(t).length }; } set font(v) {} get font() { return ''; } }
const sandbox = {
  self: { addEventListener: (kind, fn) => { if (kind === 'message') handler = fn; } },
  postMessage: (m) => messages.push(m),
  OffscreenCanvas: class { constructor() {} getContext() { return new Ctx(); } },
  navigator: { userAgent: 'node' }, console, setTimeout, clearTimeout, performance,
  TextEncoder, TextDecoder, URL, fetch: async () => ({ json: async () => ({}) }),
};
sandbox.globalThis = sandbox; sandbox.window = undefined;
vm.createContext(sandbox);
vm.runInContext(fs.readFileSync(workerPath, 'utf8'), sandbox);
const config = { nodeLabelsToHide: [], };
handler({ data: { eventType: 0, paneId: 'pane', graph, showOnNodeItemTypes: {}, nodeDataProviderRuns: {},
                  config, groupNodeChildrenCountThreshold: 1000, flattenLayers: false,
                  keepLayersWithASingleChild: false, initialLayout: true } });
const result = messages.find(m => m.eventType === 1);
if (!result) { console.log('no graph processed', messages); process.exit(1); }
const mg = result.modelGraph;
const nodes = mg.nodes;
const groups = nodes.filter(n => n.nodeType === 1);
const ops = nodes.filter(n => n.nodeType === 0);
const laidOut = nodes.filter(n => n.level === 0 && n.x !== undefined);
console.log(`processed "${mg.id}": ${ops.length} op nodes, ${groups.length} group (kernel) nodes: ` +
            groups.map(g => g.label).join(', '));
const top = nodes.filter(n => n.level === 0);
console.log(`top level before expanding: ${top.map(n => n.label).join(', ')}`);
console.log(`laid out: ${laidOut.length} nodes with positions; e.g. ` +
            laidOut.slice(0, 4).map(n => `${n.label}@(${Math.round(n.globalX ?? n.x)},${Math.round(n.globalY ?? n.y)}) ${Math.round(n.width)}x${Math.round(n.height)}`).join('; '));
const right = Math.max(...laidOut.map(n => n.x + n.width)), bottom = Math.max(...laidOut.map(n => n.y + n.height));
console.log(`canvas with every kernel collapsed: ${Math.round(right)}x${Math.round(bottom)} px`);
// expand the first kernel
const first = groups[0];
messages.length = 0;
handler({ data: { eventType: 2, modelGraphId: mg.id, rendererId: 'pane', groupNodeId: first.id, expand: true,
                  showOnNodeItemTypes: {}, nodeDataProviderRuns: {}, config, all: false } });
const expanded = messages.find(m => m.eventType === 3);
if (expanded) {
  const g = expanded.modelGraph.nodes.find(n => n.id === first.id);
  const kids = expanded.modelGraph.nodes.filter(n => n.nsParentId === first.id || (n.namespace === first.label && n.nodeType === 0));
  console.log(`expanded "${first.label}": ${g.width}x${g.height}, holds ${kids.map(k => k.label).join(', ')}`);
}
