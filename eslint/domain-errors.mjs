// The domain-error rule: code below the edge (core, the tool SDK, tool
// libraries) says what went wrong by the class it throws, and never decides
// or reads an HTTP status. The edge maps each class to its status in one
// table (libs/edge/errors/error-kinds.ts). The rule reports
//  - an error constructed (or a super call of an error class) with an HTTP
//    status literal (100-599) among its arguments, and
//  - a `status`/`statusCode` read on a caught error: a `catch (e)` parameter,
//    the parameter of a `.catch(...)` or `catchError(...)` callback, or a value
//    cast to a type that declares `status`.
// Classes that carry another party's status as data (`UpstreamHttpError`'s
// `upstreamStatus`) are named in the `allow` option.

const STATUS_KEYS = new Set(['status', 'statusCode']);
const isHttpStatus = (node) => node?.type === 'Literal' && typeof node.value === 'number' && Number.isInteger(node.value) && node.value >= 100 && node.value <= 599;
const calleeName = (callee) => (callee?.type === 'Identifier' ? callee.name : callee?.type === 'MemberExpression' && !callee.computed ? callee.property.name : null);

/** The expression under casts, non-null assertions and parentheses. */
function unwrap(node) {
  while (node && (node.type === 'TSAsExpression' || node.type === 'TSTypeAssertion' || node.type === 'TSNonNullExpression' || node.type === 'TSSatisfiesExpression'))
    node = node.expression;
  return node;
}

/** Whether a type (a literal, an intersection or union of them) declares a `status` member. */
function declaresStatus(type) {
  if (!type) return false;
  if (type.type === 'TSTypeLiteral') return type.members.some((m) => m.type === 'TSPropertySignature' && m.key?.type === 'Identifier' && STATUS_KEYS.has(m.key.name));
  if (type.type === 'TSUnionType' || type.type === 'TSIntersectionType') return type.types.some(declaresStatus);
  return false;
}

/** The names a function binds as its plain parameters. */
const paramNames = (fn) => fn.params.filter((p) => p.type === 'Identifier').map((p) => p.name);

/** @type {import('eslint').Rule.RuleModule} */
export const noHttpStatus = {
  meta: {
    type: 'problem',
    docs: { description: 'Domain code throws the class of its failure and leaves HTTP statuses to the edge' },
    schema: [{ type: 'object', properties: { allow: { type: 'array', items: { type: 'string' } } }, additionalProperties: false }],
    messages: {
      constructs:
        '{{name}} is given the HTTP status {{status}}: domain errors carry no status. Throw the class of the failure (libs/tool-sdk/errors.ts; a new kind is a new subclass) and give it its status in libs/edge/errors/error-kinds.ts.',
      reads:
        'Reading `{{key}}` of a caught error decides by an HTTP status: test the error class instead (`instanceof NotFoundError`); statuses belong to the edge (libs/edge/errors/error-kinds.ts).',
    },
  },
  create(context) {
    const allow = new Set(context.options[0]?.allow ?? []);
    /** Caught-error names in scope, innermost last. */
    const caught = [];

    /** The class whose constructor a `super(...)` call is in, when it extends an error class. */
    const superclassName = (node) => {
      for (let n = node.parent; n; n = n.parent) {
        if (n.type === 'ClassDeclaration' || n.type === 'ClassExpression') return n.superClass?.type === 'Identifier' ? n.superClass.name : null;
      }
      return null;
    };

    const checkArguments = (node, name) => {
      if (!name || !/Error$/.test(name) || allow.has(name)) return;
      const status = node.arguments.find(isHttpStatus);
      if (status) context.report({ node: status, messageId: 'constructs', data: { name, status: String(status.value) } });
    };

    /** A callback whose first parameter is a caught error: `.catch((e) => ...)`, `catchError((err) => ...)`, `.then(ok, (e) => ...)`. */
    const caughtParamsOf = (fn) => {
      const call = fn.parent;
      if (call?.type !== 'CallExpression') return [];
      const name = calleeName(call.callee);
      const index = call.arguments.indexOf(fn);
      if ((name === 'catch' && index === 0) || (name === 'catchError' && index === 0) || (name === 'then' && index === 1)) return paramNames(fn).slice(0, 1);
      return [];
    };

    const enterFunction = (fn) => caught.push(caughtParamsOf(fn));
    const leaveFunction = () => caught.pop();

    return {
      NewExpression: (node) => checkArguments(node, calleeName(node.callee)),
      CallExpression: (node) => {
        if (node.callee.type === 'Super') checkArguments(node, superclassName(node));
      },
      CatchClause: (node) => caught.push(node.param?.type === 'Identifier' ? [node.param.name] : []),
      'CatchClause:exit': () => caught.pop(),
      ArrowFunctionExpression: enterFunction,
      'ArrowFunctionExpression:exit': leaveFunction,
      FunctionExpression: enterFunction,
      'FunctionExpression:exit': leaveFunction,
      MemberExpression: (node) => {
        const key = node.computed ? (node.property.type === 'Literal' ? node.property.value : null) : node.property.name;
        if (!STATUS_KEYS.has(key)) return;
        const object = unwrap(node.object);
        const cast = node.object.type === 'TSAsExpression' || node.object.type === 'TSTypeAssertion' ? node.object.typeAnnotation : null;
        const isCaught = object?.type === 'Identifier' && caught.some((names) => names.includes(object.name));
        if (isCaught || declaresStatus(cast)) context.report({ node, messageId: 'reads', data: { key } });
      },
    };
  },
};

export default { rules: { 'no-http-status': noHttpStatus } };
