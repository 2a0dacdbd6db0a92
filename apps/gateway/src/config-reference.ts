import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { renderConfigReference } from '#config/config-reference.js';
import { gatewayConfigSections } from '#src/gateway-config.loader.js';

/** `npm run docs:config`: writes docs/configuration.md from the built-in modules' settings. */
const target = process.argv[2] ?? 'docs/configuration.md';
writeFileSync(target, renderConfigReference(gatewayConfigSections()));
process.stdout.write(`wrote ${target}\n`);
