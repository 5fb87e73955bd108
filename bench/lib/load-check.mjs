// Whether a run's figures may be judged: on a machine busier than its cores the figures
// say more about the other work than about Airlock, so the report gives no verdict.

/**
 * Why a run gets no verdicts, or undefined when it may be judged.
 * @param {{ cores: number; loadAverage?: { start: number[] } } | undefined} machine
 * @returns {string | undefined}
 */
export function noVerdictReason(machine) {
  const load = machine?.loadAverage?.start[0];
  if (!machine || load === undefined) return 'the machine and its load were not recorded';
  if (load <= machine.cores) return undefined;
  return `the load average at the start (${load.toFixed(1)}) exceeded the ${machine.cores} cores`;
}
