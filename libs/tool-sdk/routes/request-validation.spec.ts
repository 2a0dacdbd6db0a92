import { IsInt, IsOptional, Min } from 'class-validator';
import { InvalidRequestError } from '../errors.js';
import { listQuery, requestBody, validateFields } from './request-validation.js';

class PageDto {
  @IsOptional() @IsInt() @Min(1) size?: unknown;
}

const errorOf = (fn: () => unknown): InvalidRequestError => {
  try {
    fn();
  } catch (err) {
    return err as InvalidRequestError;
  }
  throw new Error('expected a validation error');
};

describe('request validation', () => {
  it('takes a JSON object body, an absent one only where the route allows it', () => {
    expect(requestBody({ a: 1 })).toEqual({ a: 1 });
    expect(requestBody(undefined, { optional: true })).toEqual({});
    for (const bad of [undefined, null, [], 'x', 3]) {
      expect(errorOf(() => requestBody(bad))).toMatchObject({ name: 'InvalidRequestError', param: null, message: 'The request body must be a JSON object.' });
    }
  });

  it('names the field of the first violation in param, nested under a prefix', () => {
    expect(errorOf(() => validateFields(Object.assign(new PageDto(), { size: 0 }), 'page'))).toMatchObject({
      name: 'InvalidRequestError',
      param: 'page.size',
      message: expect.stringMatching(/^Invalid value for 'page\.size': /),
    });
    expect(validateFields(Object.assign(new PageDto(), { size: 2 })).size).toBe(2);
  });

  it('reads a list query with defaults, and names the parameter of a bad value', () => {
    expect(listQuery({})).toMatchObject({ limit: 20, order: 'desc' });
    expect(listQuery({ limit: '5', order: 'asc', after: 'msg_1' }, { limit: 10 })).toMatchObject({ limit: 5, order: 'asc', after: 'msg_1' });
    expect(listQuery({ after: '' }).after).toBeUndefined();
    expect(errorOf(() => listQuery({ limit: '0' }))).toMatchObject({ param: 'limit' });
    expect(errorOf(() => listQuery({ limit: '101' }))).toMatchObject({ param: 'limit' });
    expect(errorOf(() => listQuery({ limit: '1e1' }))).toMatchObject({ param: 'limit' });
    expect(errorOf(() => listQuery({ order: 'up' }))).toMatchObject({ param: 'order' });
    expect(errorOf(() => listQuery({ after: ['a', 'b'] }))).toMatchObject({ param: 'after' });
  });
});
