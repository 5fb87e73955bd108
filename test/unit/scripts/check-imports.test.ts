import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImports } from '../../../scripts/check-imports.mjs';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Imports that break the floor plan, each with the rule that must name it. */
const planted: { file: string; source: string; rule: string; reaching: string }[] = [
  {
    file: 'src/protocol/planted-climb.ts',
    source: "import type { Agent } from '../page/agent';\nexport type Planted = Agent;\n",
    rule: 'protocol-imports-nothing',
    reaching: 'src/page/agent.ts',
  },
  {
    file: 'src/protocol/planted-package.ts',
    source: "import { z } from 'zod/mini';\nexport const planted = z.string();\n",
    rule: 'protocol-imports-nothing',
    reaching: 'node_modules/zod',
  },
  {
    // Type-only: a type in the wrong file is how the cycles of #47 closed.
    file: 'src/store/planted-climb.ts',
    source:
      "import type { runAgent } from '../worker/run/run-agent';\nexport type Planted = typeof runAgent;\n",
    rule: 'layer-order/store',
    reaching: 'src/worker/run/run-agent.ts',
  },
  {
    file: 'src/runtime/planted-neighbour.ts',
    source: "export const planted = () => import('../timing/wait');\n",
    rule: 'layer-order/runtime',
    reaching: 'src/timing/wait.ts',
  },
  {
    // Allowed by the floors (page/ is above worker/), refused because they are two threads.
    file: 'src/page/planted-reach.ts',
    source:
      "import type { AgentSetup } from '../worker/run/run-setup';\nexport type Planted = AgentSetup;\n",
    rule: 'page-beside-worker',
    reaching: 'src/worker/run/run-setup.ts',
  },
  {
    file: 'src/store/planted-classic-zod.ts',
    source: "import { z } from 'zod';\nexport const planted = z.string().min(1);\n",
    rule: 'zod-mini-only',
    reaching: 'node_modules/zod/index',
  },
  {
    // Type-only too: the rule keeps the whole of src/ on zod/mini.
    file: 'src/worker/tools/planted-classic-zod.ts',
    source: "import type { z } from 'zod/v4';\nexport type Planted = z.ZodString;\n",
    rule: 'zod-mini-only',
    reaching: 'node_modules/zod/v4/index',
  },
  {
    file: 'src/lab/planted-room.ts',
    source:
      "import { AirlockError } from '../errors/airlock-error';\nexport const planted = AirlockError;\n",
    rule: 'room-on-the-plan',
    reaching: 'src/errors/airlock-error.ts',
  },
];

/** A cycle inside one room, closed through a type-only import and a dynamic import(). */
const plantedCycle = {
  'src/tools/planted-first.ts':
    "import type { Second } from './planted-second';\nexport type First = { next?: Second };\n",
  'src/tools/planted-second.ts':
    "export type Second = { load: () => Promise<unknown> };\nexport const second: Second = { load: () => import('./planted-first') };\n",
};

let workDir: string;

/** A copy of src/ beside a link to the repository's node_modules, so packages resolve. */
async function copyOfSource(name: string): Promise<string> {
  const baseDir = join(workDir, name);
  await cp(join(repoRoot, 'src'), join(baseDir, 'src'), { recursive: true });
  await symlink(join(repoRoot, 'node_modules'), join(baseDir, 'node_modules'), 'dir');
  return baseDir;
}

async function plant(baseDir: string, file: string, source: string): Promise<void> {
  await mkdir(dirname(join(baseDir, file)), { recursive: true });
  await writeFile(join(baseDir, file), source);
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'airlock-imports-'));
});

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('the import rules npm run lint checks', () => {
  it('pass on src as it stands', { timeout: 120_000 }, async () => {
    const result = await checkImports({ baseDir: await copyOfSource('clean') });
    expect(result.violations).toEqual([]);
    expect(result.exitCode).toBe(0);
  });

  it('name every planted upward, sideways, unplaced and cyclic import by its rule, and fail', {
    timeout: 120_000,
  }, async () => {
    const baseDir = await copyOfSource('planted');
    for (const { file, source } of planted) await plant(baseDir, file, source);
    for (const [file, source] of Object.entries(plantedCycle)) await plant(baseDir, file, source);

    const result = await checkImports({ baseDir });

    for (const { file, rule, reaching } of planted) {
      expect(result.violations).toContainEqual({
        rule,
        from: file,
        to: expect.stringContaining(reaching),
      });
    }
    const cycles = result.violations.filter(({ rule }) => rule === 'no-circular');
    expect(cycles).toHaveLength(1);
    expect(cycles[0]?.from).toMatch(/^src\/tools\/planted-(first|second)\.ts$/);
    expect(cycles[0]?.to).toMatch(/^src\/tools\/planted-(first|second)\.ts → src\/tools\/planted-/);
    // Nothing beyond what was planted: the rules do not fire at random.
    expect(result.violations).toHaveLength(planted.length + cycles.length);
    expect(result.exitCode).toBeGreaterThan(0);
    expect(result.report).toContain('layer-order/store');
  });
});
