import { definePlugin } from 'switchyard-gateway';
import { DiceToolModule } from './dice.tool-module.js';

/**
 * The example's tool type as a plugin for the shipped gateway:
 * `switchyard --plugin switchyard-example-dice` (installed), or
 * `--plugin ./dist/plugin.js` (a path), loads it at boot with no host
 * application of your own. `package.json` beside `src/` publishes it.
 */
export default definePlugin({ name: 'dice', toolModules: [DiceToolModule] });
