/**
 * The shape of Claude Code's default `POST /v1/messages` request (Claude
 * Code 2.x, default settings, interactive CLI), rebuilt field for field from
 * what the CLI sends: its headers, a system prompt as cached text blocks,
 * client tools with draft-07 `input_schema`s, adaptive thinking with an
 * effort, `context_management` with the clear-thinking edit, and a
 * `metadata.user_id` of the CLI's form. Prompt texts are shortened; every
 * field and block type is as sent. Tests add simulator directives to the
 * last user text and keep everything else.
 */

export const CLAUDE_CODE_BETAS = [
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'context-management-2025-06-27',
  'fine-grained-tool-streaming-2025-05-14',
];

export const CLAUDE_CODE_HEADERS: Record<string, string> = {
  'anthropic-version': '2023-06-01',
  'anthropic-beta': CLAUDE_CODE_BETAS.join(','),
  'anthropic-dangerous-direct-browser-access': 'true',
  'x-app': 'cli',
  'user-agent': 'claude-cli/2.0.76 (external, cli)',
  'x-stainless-lang': 'js',
  'x-stainless-package-version': '0.70.0',
  'x-stainless-os': 'Linux',
  'x-stainless-arch': 'x64',
  'x-stainless-runtime': 'node',
  'x-stainless-runtime-version': 'v20.19.0',
  'x-stainless-retry-count': '0',
  'x-stainless-timeout': '600',
};

const schema = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
  $schema: 'http://json-schema.org/draft-07/schema#',
});

export const CLAUDE_CODE_TOOLS = [
  {
    name: 'Task',
    description: 'Launch a new agent to handle complex, multi-step tasks autonomously.',
    input_schema: schema(
      {
        description: { type: 'string', description: 'A short (3-5 word) description of the task' },
        prompt: { type: 'string', description: 'The task for the agent to perform' },
        subagent_type: { type: 'string', description: 'The type of specialized agent to use for this task' },
      },
      ['description', 'prompt', 'subagent_type'],
    ),
  },
  {
    name: 'Bash',
    description: 'Executes a given bash command in a persistent shell session with optional timeout.',
    input_schema: schema(
      {
        command: { type: 'string', description: 'The command to execute' },
        timeout: { type: 'number', description: 'Optional timeout in milliseconds (max 600000)' },
        description: { type: 'string', description: 'Clear, concise description of what this command does in 5-10 words.' },
        run_in_background: { type: 'boolean', description: 'Set to true to run this command in the background.' },
      },
      ['command'],
    ),
  },
  {
    name: 'Glob',
    description: 'Fast file pattern matching tool that works with any codebase size.',
    input_schema: schema(
      { pattern: { type: 'string', description: 'The glob pattern to match files against' }, path: { type: 'string', description: 'The directory to search in.' } },
      ['pattern'],
    ),
  },
  {
    name: 'Grep',
    description: 'A powerful search tool built on ripgrep.',
    input_schema: schema(
      {
        pattern: { type: 'string', description: 'The regular expression pattern to search for in file contents' },
        path: { type: 'string', description: 'File or directory to search in.' },
        output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'], description: 'Output mode.' },
        '-n': { type: 'boolean', description: 'Show line numbers in output.' },
      },
      ['pattern'],
    ),
  },
  {
    name: 'Read',
    description: 'Reads a file from the local filesystem.',
    input_schema: schema(
      {
        file_path: { type: 'string', description: 'The absolute path to the file to read' },
        offset: { type: 'number', description: 'The line number to start reading from.' },
        limit: { type: 'number', description: 'The number of lines to read.' },
      },
      ['file_path'],
    ),
  },
  {
    name: 'Edit',
    description: 'Performs exact string replacements in files.',
    input_schema: schema(
      {
        file_path: { type: 'string', description: 'The absolute path to the file to modify' },
        old_string: { type: 'string', description: 'The text to replace' },
        new_string: { type: 'string', description: 'The text to replace it with' },
        replace_all: { type: 'boolean', default: false, description: 'Replace all occurences of old_string (default false)' },
      },
      ['file_path', 'old_string', 'new_string'],
    ),
  },
  {
    name: 'TodoWrite',
    description: 'Use this tool to create and manage a structured task list for your current coding session.',
    input_schema: schema(
      {
        todos: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              content: { type: 'string', minLength: 1 },
              status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] },
              activeForm: { type: 'string', minLength: 1 },
            },
            required: ['content', 'status', 'activeForm'],
            additionalProperties: false,
          },
          description: 'The updated todo list',
        },
      },
      ['todos'],
    ),
  },
];

/** The first request of a session: one user turn (the CLI's reminders, then the prompt). */
export function claudeCodeFirstRequest(prompt: string): Record<string, any> {
  return {
    model: 'switchyard-sim',
    max_tokens: 32000,
    system: [
      { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral' } },
      {
        type: 'text',
        text: 'You are an interactive CLI tool that helps users with software engineering tasks. Use the instructions below and the tools available to you to assist the user.\n\n<env>\nWorking directory: /home/dev/project\nIs directory a git repo: Yes\nPlatform: linux\n</env>',
        cache_control: { type: 'ephemeral' },
      },
    ],
    messages: [
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: '<system-reminder>\nAs you answer the user\'s questions, you can use the following context:\n# claudeMd\nRun npm test before committing.\n</system-reminder>',
          },
          { type: 'text', text: prompt, cache_control: { type: 'ephemeral' } },
        ],
      },
    ],
    tools: CLAUDE_CODE_TOOLS,
    metadata: { user_id: 'user_4f1c2d3e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d_account__session_0d3c6a8e-2f7b-4a51-9c1e-6b5d4e3f2a10' },
    stream: true,
    thinking: { type: 'adaptive' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    output_config: { effort: 'medium' },
  };
}
