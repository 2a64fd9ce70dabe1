/**
 * @aptix/reasoner/testing: a scripted OpenAI-compatible Responses server on loopback, for testing
 * agents without a network. Everything exported here is public API.
 */
export {
  call,
  respond,
  ScriptedResponsesServer,
  type RecordedRequest,
  type RequestBody,
  type ScriptedCall,
  type ScriptStep,
} from './scripted-responses-server.js';
