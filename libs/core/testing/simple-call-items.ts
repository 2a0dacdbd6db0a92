// The helpers moved to the tool-module contract (they are public now); the test tool types keep their import.
export { simpleCallOutput, simpleCallPlan, simpleCallToModelItems } from '#tool-sdk/helpers/call-items.js';
