import { lineScript } from './line.js';
import lineSource from './line.lua';
import { renewEachScript } from './renewEach.js';
import readSource from './rwRead.lua';
import readExtendSource from './rwReadExtend.lua';
import readReleaseSource from './rwReadRelease.lua';
import wakeSource from './rwWake.lua';
import writeSource from './rwWrite.lua';
import writeReleaseSource from './rwWriteRelease.lua';

/** The scripts that read the server's TIME or keep wait lines get line.lua's helpers in front of their source. */
export const rwReadScript = lineScript('rwRead', readSource);
export const rwReadExtendScript = lineScript('rwReadExtend', readExtendSource);
/** Many readers' rwReadExtend in one call (renewEach.lua): the renewals of a batch. */
export const rwReadExtendEachScript = renewEachScript('rwReadExtendEach', [lineSource, 'line_helpers()'], readExtendSource);
export const rwReadReleaseScript = lineScript('rwReadRelease', wakeSource, readReleaseSource);
export const rwWriteScript = lineScript('rwWrite', writeSource);
export const rwWriteReleaseScript = lineScript('rwWriteRelease', wakeSource, writeReleaseSource);
