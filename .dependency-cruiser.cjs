/**
 * Import rules for `src/`: the floor plan the build enforces (issue #47). `npm run lint` runs
 * them through `scripts/check-imports.mjs`. A change to the plan is a reviewed edit of this
 * file, and of `floors` in it most of all.
 *
 * Every folder of `src/` is a room; `worker/` has a room per subfolder; the entry files at
 * `src/*.ts` are one room on the top floor. A room imports only itself and rooms on lower
 * floors: never one above, never a neighbour on its own floor. Type-only imports and dynamic
 * `import()` count like any other (the cycles of #47 closed through those).
 */

/** The floors, lowest first; the rooms on one floor do not import each other. */
const floors = [
  ['protocol'],
  ['errors'],
  ['runtime', 'timing'],
  ['tools'],
  ['model'],
  ['store'],
  ['knowledge'],
  ['tabs', 'sandbox', 'code'],
  ['worker/policy'],
  ['worker/tools'],
  ['worker/mcp'],
  ['worker/context'],
  ['worker/learning'],
  ['worker/run'],
  ['worker/tabs'],
  ['worker/services'],
  ['page'],
  ['ai-sdk', 'otel', 'proxy', 'testing', 'webmcp'],
  ['entries'],
];

/** The path pattern of a room's files. */
const roomPath = (room) => (room === 'entries' ? '^src/[^/]+\\.ts$' : `^src/${room}/`);
const anyOf = (rooms) => `(${rooms.map(roomPath).join('|')})`;

/** One rule per room: what it imports from `src/` lies in itself or on a floor below. */
const layerRules = floors.flatMap((rooms, level) =>
  rooms.map((room) => ({
    name: `layer-order/${room}`,
    comment: `src/${room} imports only itself and the floors below it: ${
      floors.slice(0, level).flat().join(', ') || 'nothing'
    }.`,
    severity: 'error',
    from: { path: roomPath(room) },
    to: { path: '^src/', pathNot: anyOf([room, ...floors.slice(0, level).flat()]) },
  })),
);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles between files, through type-only imports and import() too.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'protocol-imports-nothing',
      comment: 'src/protocol is the shared ground floor: no other room, no package, no builtin.',
      severity: 'error',
      from: { path: roomPath('protocol') },
      to: { pathNot: roomPath('protocol') },
    },
    // The ground floor's own rule above is stricter than a layer rule would be.
    ...layerRules.filter((rule) => rule.name !== 'layer-order/protocol'),
    {
      name: 'page-beside-worker',
      comment:
        'The page and the agent worker are two threads side by side: page/ imports no worker/ room (they meet over protocol/), so no worker code reaches the page bundle.',
      severity: 'error',
      from: { path: roomPath('page') },
      to: { path: '^src/worker/' },
    },
    {
      name: 'room-on-the-plan',
      comment: 'Every file of src/ lies in a room of `floors`: a new folder is placed there first.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: anyOf(floors.flat()) },
    },
    {
      name: 'room-on-the-plan',
      comment: 'Every file of src/ lies in a room of `floors`: a new folder is placed there first.',
      severity: 'error',
      from: { path: '^src/', pathNot: anyOf(floors.flat()) },
      to: {},
    },
    {
      name: 'zod-mini-only',
      comment:
        "src/ imports zod as zod/mini: classic zod's methods cannot be tree-shaken, and took 26 KB gzip, a fifth, of the agent worker's start (users' own schemas reach tools through Standard Schema, whatever their zod).",
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '(^|/)node_modules/zod/', pathNot: '(^|/)node_modules/zod/(v4/)?mini/' },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import the checker cannot resolve is an arrow it cannot judge.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports are arrows too: keep them in the graph.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // Packages publish their entry points through `exports`; resolve them as the bundler does.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
