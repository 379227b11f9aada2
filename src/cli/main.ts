#!/usr/bin/env node
// The runtime check comes before the program's imports: better-sqlite3 would crash on the wrong Node.js first.
import { requirePinnedRuntime } from './runtime.js';

requirePinnedRuntime();
await import('./program.js');
