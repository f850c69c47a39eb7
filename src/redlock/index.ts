export { Redlock, type RedlockOptions } from './Redlock.js';
export { QuorumCoordinator } from './QuorumCoordinator.js';
export { quorumFor, verdict, denialCause, type Verdict } from './quorum.js';
