/**
 * `switchyard-gateway/testing`: what a tool module's own tests need, outside
 * this repository. `SimulatedUpstream` is a simulator, not a model: it
 * speaks vLLM's wire format and follows `[[...]]` directives in the input.
 */
export { ToolTestGateway, type ToolTestGatewayOptions, type StreamedEvent } from './tool-test-gateway.js';
export { SimulatedUpstream, type SimulatedUpstreamOptions, type RecordedRequest } from '../../simulator/src/simulated-upstream.js';
