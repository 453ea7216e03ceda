// Demo page entry: the chat section and the WebGPU self-check section.

import { setUpChat } from './chat';
import { setUpSelfCheck } from './selfcheck';

setUpChat();
setUpSelfCheck();
