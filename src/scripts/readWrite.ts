import { lineScript } from './line.js';
import { LuaScript } from './LuaScript.js';
import readSource from './rwRead.lua';
import readExtendSource from './rwReadExtend.lua';
import readReleaseSource from './rwReadRelease.lua';
import writeSource from './rwWrite.lua';

/** The scripts that read the server's TIME get line.lua's server_time in front of their source. */
export const rwReadScript = lineScript('rwRead', readSource);
export const rwReadExtendScript = lineScript('rwReadExtend', readExtendSource);
export const rwReadReleaseScript = new LuaScript('rwReadRelease', readReleaseSource);
export const rwWriteScript = lineScript('rwWrite', writeSource);
