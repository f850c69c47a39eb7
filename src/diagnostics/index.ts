export {
  type AcquireEvent,
  type ChannelName,
  channels,
  type ExtendEvent,
  type LostEvent,
  type ReleaseEvent,
} from './channels.js';
