import { describeBackgroundStoreContract } from '../testing/background-store.contract.js';
import { MemoryBackgroundStore } from './memory-background.store.js';

describeBackgroundStoreContract('memory', () => new MemoryBackgroundStore());
