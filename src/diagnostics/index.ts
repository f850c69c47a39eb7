export {
  type AcquireEvent,
  type ChannelName,
  channels,
  type EventError,
  type EventNodeOutcome,
  type ExtendEvent,
  type LostEvent,
  type ReleaseEvent,
  type ReleaseSettledEvent,
} from './channels.js';
