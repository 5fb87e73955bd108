import { dropRefusedSuite } from './drop-refused-suite';
import { freshStore, storesClosedAfterEach } from './store-fixture';

// Refused turns dropped and replaced, in the store on fake IndexedDB (and, through
// memory-store.test.ts, on the in-memory tables).

dropRefusedSuite(storesClosedAfterEach(freshStore));
