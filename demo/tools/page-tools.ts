/**
 * The demo's page tool. It runs on the page thread because it changes the page; the
 * agent worker only sees its descriptor and result.
 */
import { type Tool, tool } from 'airlock-agents';
import { z } from 'zod';
import { THEME_COLOR_NAMES } from '../shared/theme-colors';
import { applyTheme } from '../views/theme';

/** `set_theme`: changes the page's accent colour, once the user approves. */
export function createPageTools(): readonly Tool[] {
  const setTheme = tool({
    name: 'set_theme',
    description: `Changes this page's accent colour. The user is asked to approve first. Colours: ${THEME_COLOR_NAMES.join(', ')}.`,
    parameters: z.object({
      color: z.enum(THEME_COLOR_NAMES).describe('The new accent colour'),
    }),
    // It changes what the user sees, so the user decides: the call waits for their answer.
    needsApproval: true,
    execute: ({ color }) => {
      applyTheme(color);
      return { color };
    },
  });
  return [setTheme];
}
