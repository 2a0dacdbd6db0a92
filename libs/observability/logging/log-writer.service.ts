import { Inject, Injectable, Optional } from '@nestjs/common';
import { OBSERVABILITY_SETTINGS, type ObservabilityConfig } from '../config/observability.config-section.js';
import { LOG_SINK, LineWriter, type LineSink } from './log-lines.js';

export { LOG_SINK, LineWriter, type LineSink, type LogFields, type LogLevel } from './log-lines.js';

/** The app's structured lines (`LineWriter`), injected with the observability settings and an optional `LOG_SINK`. */
@Injectable()
export class LogWriter extends LineWriter {
  constructor(@Inject(OBSERVABILITY_SETTINGS) settings: ObservabilityConfig, @Optional() @Inject(LOG_SINK) sink?: LineSink) {
    super(settings, sink);
  }
}
