import { Module } from '@nestjs/common';
import { registerConfigSection } from '#config/config-section.js';
import { consoleConfigSection } from './console.config-section.js';

/**
 * The `console` setting alone, always loaded so that the key is known to
 * validation; the console's routes (`ConsoleModule`) are added only when it
 * is on.
 */
@Module({ providers: [registerConfigSection(consoleConfigSection)] })
export class ConsoleSettingsModule {}
