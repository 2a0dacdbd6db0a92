import { describeStateStoreContract } from '../testing/state-store.contract.js';
import { MemoryStateStore } from './memory-state-store.js';

describeStateStoreContract('memory', () => new MemoryStateStore());
