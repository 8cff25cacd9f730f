import { compilePlaceholders, orderParams } from '../../../../shared/sql/placeholders';
import { SqlStatementError } from '../../../../shared/sql/query-engine';
import { firstKeyword, hasSeveralStatements, referencedNames, splitSql } from '../../../../shared/sql/sql-lexer';

describe('compilePlaceholders', () => {
  it('turns each #{name} into a numbered parameter, reusing the number of a repeated name', () => {
    const compiled = compilePlaceholders(
      'SELECT * FROM orders WHERE region = #{region} AND amount >= #{ min } OR region = #{region}',
    );
    expect(compiled).toEqual({
      text: 'SELECT * FROM orders WHERE region = ?1 AND amount >= ?2 OR region = ?1',
      names: ['region', 'min'],
    });
  });

  it('leaves a text without placeholders unchanged', () => {
    expect(compilePlaceholders('SELECT count(*) FROM orders')).toEqual({
      text: 'SELECT count(*) FROM orders',
      names: [],
    });
  });

  it('does not treat #{...} inside string literals, quoted identifiers or comments as placeholders', () => {
    const sql = [
      "SELECT '#{a}' AS literal, 'it''s #{b}' AS escaped, \"#{c}\" AS quoted, [#{d}], `#{e}`",
      '-- a comment with #{f} and ? and :g',
      '/* a block with #{h} */ FROM t WHERE x = #{x}',
    ].join('\n');
    const compiled = compilePlaceholders(sql);
    expect(compiled.names).toEqual(['x']);
    expect(compiled.text).toBe(
      [
        "SELECT '#{a}' AS literal, 'it''s #{b}' AS escaped, \"#{c}\" AS quoted, [#{d}], `#{e}`",
        '-- a comment with #{f} and ? and :g',
        '/* a block with #{h} */ FROM t WHERE x = ?1',
      ].join('\n'),
    );
  });

  it.each([
    ['?', 'SELECT * FROM t WHERE a = ?'],
    ['?1', 'SELECT * FROM t WHERE a = ?1'],
    [':a', 'SELECT * FROM t WHERE a = :a'],
    ['@a', 'SELECT * FROM t WHERE a = @a'],
    ['$a', 'SELECT * FROM t WHERE a = $a'],
    ['#a', 'SELECT * FROM t WHERE a = #a'],
  ])('refuses the engine’s own parameter marker %s', (marker, sql) => {
    expect(() => compilePlaceholders(sql)).toThrow(
      new SqlStatementError(
        `parameter marker '${marker}' is not supported: registered queries use #{name} placeholders`,
      ),
    );
  });

  it('accepts $ inside an identifier, where it is not a marker', () => {
    expect(compilePlaceholders('SELECT a$b FROM t').text).toBe('SELECT a$b FROM t');
  });

  it('refuses a malformed placeholder', () => {
    expect(() => compilePlaceholders('SELECT #{a,jdbcType=VARCHAR}')).toThrow(
      new SqlStatementError(
        "malformed placeholder '#{a,jdbcType=VARCHAR}': write #{name} with a declared parameter name",
      ),
    );
  });

  it('keeps an injection attempt in a value out of the text: values are only ever bound', () => {
    const compiled = compilePlaceholders('SELECT * FROM t WHERE name = #{name}');
    const values = orderParams(compiled, { name: "x' OR '1'='1" });
    expect(compiled.text).toBe('SELECT * FROM t WHERE name = ?1');
    expect(values).toEqual(["x' OR '1'='1"]);
  });
});

describe('orderParams', () => {
  it('lists values in parameter-number order', () => {
    const compiled = compilePlaceholders('SELECT #{b}, #{a}, #{b}');
    expect(orderParams(compiled, { a: 1, b: 'two' })).toEqual(['two', 1]);
  });

  it('fails a placeholder without a value', () => {
    const compiled = compilePlaceholders('SELECT #{a}');
    expect(() => orderParams(compiled, {})).toThrow(
      new SqlStatementError('placeholder #{a} has no declared parameter'),
    );
  });
});

describe('sql lexer', () => {
  it('splits code from literals, identifiers and comments and keeps every character', () => {
    const sql = "SELECT 'a''b', \"c\" -- d\nFROM /* e */ t";
    const segments = splitSql(sql);
    expect(segments).toEqual([
      { kind: 'code', text: 'SELECT ' },
      { kind: 'string', text: "'a''b'" },
      { kind: 'code', text: ', ' },
      { kind: 'identifier', text: '"c"' },
      { kind: 'code', text: ' ' },
      { kind: 'comment', text: '-- d\n' },
      { kind: 'code', text: 'FROM ' },
      { kind: 'comment', text: '/* e */' },
      { kind: 'code', text: ' t' },
    ]);
    expect(segments.map((s) => s.text).join('')).toBe(sql);
  });

  it('finds the first keyword after comments', () => {
    expect(firstKeyword('  -- note\n /* x */ select 1')).toBe('SELECT');
    expect(firstKeyword('WITH a AS (SELECT 1) DELETE FROM t')).toBe('WITH');
    expect(firstKeyword('-- only a comment')).toBe('');
  });

  it('tells one statement from several', () => {
    expect(hasSeveralStatements('SELECT 1')).toBe(false);
    expect(hasSeveralStatements('SELECT 1;')).toBe(false);
    expect(hasSeveralStatements('SELECT 1; -- trailing comment\n ;  ')).toBe(false);
    expect(hasSeveralStatements('SELECT \'a;b\', "c;d" /* ; */')).toBe(false);
    expect(hasSeveralStatements('SELECT 1; DELETE FROM t')).toBe(true);
    expect(hasSeveralStatements("SELECT 1;'x'")).toBe(true);
  });

  it('lists the names a statement may use for tables', () => {
    const names = referencedNames('SELECT o.amount FROM orders o JOIN "app-customers" c ON c.id = o.customer');
    expect(names.has('orders')).toBe(true);
    expect(names.has('app-customers')).toBe(true);
    expect(names.has('customers')).toBe(false);
  });
});
