/**
 * Settings: the model sources (add one with its key, which goes to the vault and never comes
 * back; test a connection before saving), every other single-valued setting as a form made from
 * the daemon's schema, all of them as the JSON the daemon checks against that schema (its
 * problems shown as it words them, beside the field they name), the schema's reference, and the
 * names of the vault's secrets. Saved settings apply when homed starts again.
 */
import { api, type Probe, type SettingsRead, SettingsRefused } from './api.ts';
import { clear, h, json } from './dom.ts';
import { type FormField, fieldText, formFields, withFields } from './settingsForm.ts';

type Source = Record<string, unknown>;

const field = (label: string, input: HTMLElement): HTMLElement => h('label', { class: 'field' }, h('span', {}, label), input);

/** The vault name a source's key is stored under: LLM_<NAME>_KEY in capitals. */
export const keyNameOf = (source: string): string =>
  `LLM_${
    source
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 50) || 'SOURCE'
  }_KEY`;

const keyOf = (source: Source): string =>
  typeof source.apiKeySecret === 'string'
    ? `vault: ${source.apiKeySecret}`
    : typeof source.apiKeyEnv === 'string'
      ? `environment: ${source.apiKeyEnv}`
      : source.apiKey !== undefined
        ? 'in settings.json (move it to the vault)'
        : 'none';

export class SettingsView {
  readonly element = h('section', { class: 'settings', 'aria-label': 'Settings' });
  private read: SettingsRead | undefined;
  private readonly notice = h('p', { class: 'notice', role: 'status' });

  async show(): Promise<void> {
    this.read = await api.settings();
    this.render();
  }

  private say(text: string, failed = false): void {
    this.notice.textContent = text;
    this.notice.classList.toggle('failed', failed);
  }

  private sources(): Source[] {
    const llm = (this.read?.settings.llm ?? {}) as { sources?: Source[] };
    return Array.isArray(llm.sources) ? llm.sources : [];
  }

  /** Saves, or shows why not; the problems the daemon found (none when saved or when it failed otherwise). */
  private async save(settings: Record<string, unknown>, problemsBox: HTMLElement): Promise<readonly { key: string; problem: string }[]> {
    clear(problemsBox);
    try {
      await api.saveSettings(settings);
      this.read = await api.settings();
      // Drawn before it is said, so nothing typed after the notice appears is wiped by the redraw.
      this.render();
      this.say('Saved to settings.json. Restart homed for the change to take effect.');
      return [];
    } catch (error) {
      if (error instanceof SettingsRefused) {
        problemsBox.append(
          h('p', {}, 'The daemon refused these settings; nothing was written:'),
          h(
            'ul',
            {},
            error.problems.map((p) => h('li', {}, h('code', {}, p.key), `: ${p.problem}`)),
          ),
        );
        return error.problems;
      }
      this.say(`Not saved: ${(error as Error).message}`, true);
      return [];
    }
  }

  private render(): void {
    const read = this.read!;
    clear(
      this.element,
      h('h2', {}, 'Settings'),
      this.notice,
      read.broken ? h('p', { class: 'error', role: 'alert' }, read.broken) : null,
      this.sourcesSection(read),
      this.formSection(read),
      this.jsonSection(read),
      this.secretsSection(read),
      h(
        'details',
        { class: 'reference' },
        h('summary', {}, `Every setting (${read.reference.length})`),
        h(
          'table',
          {},
          h('thead', {}, h('tr', {}, h('th', {}, 'key'), h('th', {}, 'type'), h('th', {}, 'what it does'))),
          h(
            'tbody',
            {},
            read.reference.map((r) =>
              h('tr', {}, h('td', {}, h('code', {}, r.key)), h('td', {}, r.values ? r.values.join(' | ') : r.type), h('td', {}, r.doc)),
            ),
          ),
        ),
      ),
    );
  }

  private sourcesSection(read: SettingsRead): HTMLElement {
    const sources = this.sources();
    const problems = h('div', { class: 'problems', role: 'alert' });
    const name = h('input', {
      name: 'name',
      required: true,
      autocomplete: 'off',
      value: sources.length ? '' : 'local',
    }) as HTMLInputElement;
    const adapter = h(
      'select',
      { name: 'adapter' },
      read.adapters.map((a) => h('option', { value: a }, a)),
    ) as HTMLSelectElement;
    const baseUrl = h('input', {
      name: 'baseUrl',
      required: true,
      placeholder: 'http://127.0.0.1:8000/v1',
      autocomplete: 'off',
    }) as HTMLInputElement;
    const model = h('input', { name: 'model', required: true, autocomplete: 'off' }) as HTMLInputElement;
    const contextWindow = h('input', { name: 'contextWindow', type: 'number', min: 1, placeholder: 'optional' }) as HTMLInputElement;
    const apiKey = h('input', {
      name: 'apiKey',
      type: 'password',
      autocomplete: 'off',
      placeholder: 'optional; stored in the vault',
    }) as HTMLInputElement;
    const result = h('div', { class: 'probe', 'aria-live': 'polite' });
    const test = async (): Promise<void> => {
      clear(result, h('p', {}, 'Asking the server…'));
      try {
        const probe: Probe = await api.probe({
          adapter: adapter.value,
          baseUrl: baseUrl.value,
          model: model.value,
          ...(apiKey.value ? { apiKey: apiKey.value } : {}),
        });
        clear(
          result,
          probe.error
            ? h('p', { class: 'failed' }, `It did not answer: ${probe.error}`)
            : h('p', { class: 'ok' }, `It answered: ${JSON.stringify(probe.answer ?? '')}`),
          probe.models ? h('p', {}, `It serves: ${probe.models.join(', ') || '(none listed)'}`) : null,
          probe.listError ? h('p', { class: 'muted' }, `No model list: ${probe.listError}`) : null,
        );
      } catch (error) {
        clear(result, h('p', { class: 'failed' }, `Could not test: ${(error as Error).message}`));
      }
    };
    const add = async (event: Event): Promise<void> => {
      event.preventDefault();
      const source: Source = { name: name.value, adapter: adapter.value, baseUrl: baseUrl.value, model: model.value };
      if (contextWindow.value) source.contextWindow = Number(contextWindow.value);
      try {
        if (apiKey.value) {
          const stored = await api.setSecret(keyNameOf(name.value), apiKey.value);
          source.apiKeySecret = stored.stored;
        }
      } catch (error) {
        this.say(`The key was not stored: ${(error as Error).message}`, true);
        return;
      }
      apiKey.value = '';
      const settings = { ...read.settings, llm: { ...((read.settings.llm ?? {}) as object), sources: [...sources, source] } };
      await this.save(settings, problems);
    };
    const remove = async (index: number): Promise<void> => {
      const settings = {
        ...read.settings,
        llm: { ...((read.settings.llm ?? {}) as object), sources: sources.filter((_, i) => i !== index) },
      };
      await this.save(settings, problems);
    };
    return h(
      'section',
      { class: 'card', 'aria-label': 'Model sources' },
      h('h3', {}, 'Model sources'),
      h('p', { class: 'muted' }, 'Asked in order; the first that answers is used.'),
      sources.length
        ? h(
            'table',
            { class: 'sources' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['name', 'adapter', 'URL', 'model', 'context', 'key', ''].map((t) => h('th', {}, t)),
              ),
            ),
            h(
              'tbody',
              {},
              sources.map((s, i) =>
                h(
                  'tr',
                  { 'data-source': String(s.name ?? i) },
                  h('td', {}, String(s.name ?? '')),
                  h('td', {}, String(s.adapter ?? '')),
                  h('td', {}, String(s.baseUrl ?? '')),
                  h('td', {}, String(s.model ?? '')),
                  h('td', {}, s.contextWindow === undefined ? '' : String(s.contextWindow)),
                  h('td', {}, keyOf(s)),
                  h('td', {}, h('button', { type: 'button', onclick: () => void remove(i) }, 'Remove')),
                ),
              ),
            ),
          )
        : h('p', {}, 'No source yet: add the server your model runs on.'),
      h(
        'form',
        { class: 'source-form', onsubmit: (event: Event) => void add(event) },
        h('h4', {}, 'Add a source'),
        field('Name', name),
        field('Adapter', adapter),
        field('Base URL', baseUrl),
        field('Model', model),
        field('Context window (tokens)', contextWindow),
        field('API key', apiKey),
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', onclick: () => void test() }, 'Test connection'),
          h('button', { type: 'submit', class: 'primary' }, 'Add source'),
        ),
        result,
        problems,
      ),
    );
  }

  private formSection(read: SettingsRead): HTMLElement {
    const fields = formFields(read.reference);
    /** Each field's input and the line its problem goes on, by the field's key. */
    const rows = new Map<string, { field: FormField; input: HTMLInputElement | HTMLSelectElement; note: HTMLElement }>();
    const problems = h('div', { class: 'problems', role: 'alert' });
    const inputFor = (field: FormField): HTMLInputElement | HTMLSelectElement => {
      const current = fieldText(read.settings, field);
      const attributes = { name: field.key, 'data-key': field.key, 'aria-describedby': `doc-${field.key}` };
      if (field.kind === 'boolean' || field.kind === 'enum') {
        const choices = field.kind === 'boolean' ? ['true', 'false'] : (field.values ?? []);
        return h(
          'select',
          attributes,
          h('option', { value: '' }, '(default)'),
          choices.map((choice) => h('option', { value: choice, selected: choice === current }, choice)),
          // A value the file holds that is none of the choices stays visible, for the check to name.
          current && !choices.includes(current) ? h('option', { value: current, selected: true }, current) : null,
        ) as HTMLSelectElement;
      }
      const input = h('input', {
        ...attributes,
        placeholder: field.kind === 'words' ? '(default) comma-separated' : '(default)',
        autocomplete: 'off',
        ...(field.kind === 'integer' || field.kind === 'number' ? { inputmode: 'decimal' } : {}),
      }) as HTMLInputElement;
      input.value = current;
      return input;
    };
    const groups = new Map<string, FormField[]>();
    for (const field of fields) groups.set(field.path[0]!, [...(groups.get(field.path[0]!) ?? []), field]);
    const save = async (event: Event): Promise<void> => {
      event.preventDefault();
      const texts = new Map<FormField, string>();
      for (const { field, input, note } of rows.values()) {
        if (input.value !== fieldText(read.settings, field)) texts.set(field, input.value);
        note.textContent = '';
        input.removeAttribute('aria-invalid');
      }
      if (texts.size === 0) return this.say('Nothing changed.');
      for (const { key, problem } of await this.save(withFields(read.settings, texts), problems)) {
        const row = rows.get(key);
        if (!row) continue;
        row.note.textContent = problem;
        row.input.setAttribute('aria-invalid', 'true');
      }
    };
    return h(
      'form',
      { class: 'card settings-form', 'aria-label': 'Settings by field', onsubmit: (event: Event) => void save(event) },
      h('h3', {}, 'Memory, scheduler, security and plugins'),
      h('p', { class: 'muted' }, 'Empty means the default. The daemon checks what you save against its schema and says what is wrong.'),
      [...groups].map(([group, members]) =>
        h(
          'details',
          { class: 'settings-group', 'data-group': group },
          h('summary', {}, `${group} (${members.length})`),
          members.map((field) => {
            const input = inputFor(field);
            const note = h('span', { class: 'field-problem failed', role: 'alert' });
            rows.set(field.key, { field, input, note });
            return h(
              'label',
              { class: 'field setting-field' },
              h('code', {}, field.key),
              input,
              h('small', { id: `doc-${field.key}`, class: 'muted' }, field.doc),
              note,
            );
          }),
        ),
      ),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary save-form' }, 'Save these settings')),
      problems,
    );
  }

  private jsonSection(read: SettingsRead): HTMLElement {
    const text = h('textarea', {
      class: 'settings-json',
      rows: 16,
      spellcheck: 'false',
      'aria-label': 'settings.json',
    }) as HTMLTextAreaElement;
    text.value = json(read.settings);
    const problems = h('div', { class: 'problems', role: 'alert' });
    const save = async (): Promise<void> => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.value);
      } catch (error) {
        clear(problems, h('p', {}, `Not JSON: ${(error as Error).message}`));
        return;
      }
      await this.save(parsed as Record<string, unknown>, problems);
    };
    return h(
      'section',
      { class: 'card', 'aria-label': 'All settings' },
      h('h3', {}, 'All settings'),
      h('p', { class: 'muted' }, `${read.file}; values that look secret show as "(hidden)" and are kept as they are.`),
      text,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'primary save-json', onclick: () => void save() }, 'Save settings'),
      ),
      problems,
    );
  }

  private secretsSection(read: SettingsRead): HTMLElement {
    const name = h('input', { name: 'secret-name', placeholder: 'NAME', autocomplete: 'off' }) as HTMLInputElement;
    const value = h('input', { name: 'secret-value', type: 'password', autocomplete: 'off' }) as HTMLInputElement;
    const tools = h('input', {
      name: 'secret-tools',
      placeholder: 'tools it may fill, e.g. web_fetch,files_*',
      autocomplete: 'off',
    }) as HTMLInputElement;
    const store = async (event: Event): Promise<void> => {
      event.preventDefault();
      try {
        const list = tools.value
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean);
        const stored = await api.setSecret(name.value.trim(), value.value, list);
        value.value = '';
        this.read = await api.settings();
        this.render();
        this.say(`Stored ${stored.stored} in the vault; a tool call names it as @{${stored.stored}}.`);
      } catch (error) {
        this.say(`Not stored: ${(error as Error).message}`, true);
      }
    };
    return h(
      'section',
      { class: 'card', 'aria-label': 'Secrets' },
      h('h3', {}, 'Secrets in the vault'),
      h('p', {}, read.secrets.length ? read.secrets.join(', ') : 'none'),
      h(
        'form',
        { class: 'secret-form', onsubmit: (event: Event) => void store(event) },
        field('Name', name),
        field('Value', value),
        field('Tools', tools),
        h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Store secret')),
      ),
    );
  }
}
