// Written by scripts/write-tools-list.ts from the tools' schemas (npm run tools-list); do not edit. tools/list
// is answered from it, so that `tabward mcp` builds no tool schema before its first reply.

import type { ListedTool } from './listedTool.ts';

export const listedTools: Readonly<Record<string, ListedTool>> = {
  list_pages: {
    name: 'list_pages',
    description: 'List open tabs: id, owner (agent/user), URL, title.',
    inputSchema: {
      type: 'object',
      properties: {},
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  select_page: {
    name: 'select_page',
    description: 'Make a tab the default for later calls.',
    inputSchema: {
      type: 'object',
      properties: {
        pageId: {
          type: 'string',
        },
      },
      required: ['pageId'],
    },
    annotations: {
      destructiveHint: false,
    },
  },
  new_page: {
    name: 'new_page',
    description: 'Open a URL in a new tab owned by the agent.',
    inputSchema: {
      type: 'object',
      properties: {
        url: {
          type: 'string',
        },
        snapshot: {
          description: 'also return the snapshot',
          type: 'boolean',
        },
      },
      required: ['url'],
    },
    annotations: {
      destructiveHint: false,
    },
  },
  close_page: {
    name: 'close_page',
    description: 'Close a tab the agent opened.',
    inputSchema: {
      type: 'object',
      properties: {
        pageId: {
          type: 'string',
        },
      },
      required: ['pageId'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  navigate_page: {
    name: 'navigate_page',
    description: 'Go to a URL, or back/forward/reload, in a tab.',
    inputSchema: {
      type: 'object',
      properties: {
        url: {
          type: 'string',
        },
        type: {
          description: 'default: url',
          type: 'string',
          enum: ['url', 'back', 'forward', 'reload'],
        },
        pageId: {
          description: 'Tab id from list_pages; default: the selected tab',
          type: 'string',
        },
        snapshot: {
          description: 'also return the snapshot',
          type: 'boolean',
        },
      },
    },
    annotations: {
      destructiveHint: false,
    },
  },
  take_snapshot: {
    name: 'take_snapshot',
    description:
      'Read a tab as an accessibility tree. Elements you can act on end in @ref; pass ref to click/fill. Options: ref (one subtree), query (lines containing text), maxTokens, allRefs (refs on every element).',
    inputSchema: {
      type: 'object',
      properties: {
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        ref: {
          type: 'string',
        },
        query: {
          type: 'string',
        },
        maxTokens: {
          type: 'integer',
          minimum: 100,
          maximum: 9007199254740991,
        },
        allRefs: {
          type: 'boolean',
        },
      },
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  take_screenshot: {
    name: 'take_screenshot',
    description: 'PNG screenshot of a tab (password fields masked).',
    inputSchema: {
      type: 'object',
      properties: {
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        fullPage: {
          type: 'boolean',
        },
      },
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  wait_for: {
    name: 'wait_for',
    description: 'Wait until text appears in a tab.',
    inputSchema: {
      type: 'object',
      properties: {
        text: {
          type: 'string',
          minLength: 1,
        },
        timeoutMs: {
          type: 'integer',
          minimum: 1,
          maximum: 60000,
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        snapshot: {
          description: 'also return the snapshot',
          type: 'boolean',
        },
      },
      required: ['text'],
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  list_downloads: {
    name: 'list_downloads',
    description: "Files the agent's actions downloaded: name, size, type, path, first lines.",
    inputSchema: {
      type: 'object',
      properties: {},
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  click: {
    name: 'click',
    description: 'Click an element.',
    inputSchema: {
      type: 'object',
      properties: {
        ref: {
          type: 'string',
          description: 'Element ref from take_snapshot, e.g. e12',
        },
        doubleClick: {
          type: 'boolean',
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        snapshot: {
          description: 'also return the snapshot',
          type: 'boolean',
        },
      },
      required: ['ref'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  fill: {
    name: 'fill',
    description:
      'Type into a text field, or choose an option of a select. Give value, or secret (a secret name).',
    inputSchema: {
      type: 'object',
      properties: {
        ref: {
          type: 'string',
          description: 'Element ref from take_snapshot, e.g. e12',
        },
        value: {
          type: 'string',
        },
        secret: {
          description: 'Name of a secret to type instead of value',
          type: 'string',
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
      },
      required: ['ref'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  fill_form: {
    name: 'fill_form',
    description: 'Fill several fields at once.',
    inputSchema: {
      type: 'object',
      properties: {
        fields: {
          minItems: 1,
          maxItems: 50,
          type: 'array',
          items: {
            type: 'object',
            properties: {
              ref: {
                type: 'string',
                description: 'Element ref from take_snapshot, e.g. e12',
              },
              value: {
                type: 'string',
              },
              secret: {
                description: 'Name of a secret to type instead of value',
                type: 'string',
              },
            },
            required: ['ref'],
          },
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        snapshot: {
          description: 'also return the snapshot',
          type: 'boolean',
        },
      },
      required: ['fields'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  hover: {
    name: 'hover',
    description: 'Move the mouse over an element.',
    inputSchema: {
      type: 'object',
      properties: {
        ref: {
          type: 'string',
          description: 'Element ref from take_snapshot, e.g. e12',
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        snapshot: {
          description: 'also return the snapshot',
          type: 'boolean',
        },
      },
      required: ['ref'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  drag: {
    name: 'drag',
    description: 'Drag one element onto another.',
    inputSchema: {
      type: 'object',
      properties: {
        fromRef: {
          type: 'string',
          description: 'Element ref from take_snapshot, e.g. e12',
        },
        toRef: {
          type: 'string',
          description: 'Element ref from take_snapshot, e.g. e12',
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
      },
      required: ['fromRef', 'toRef'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  press_key: {
    name: 'press_key',
    description: 'Press a key or combination (e.g. Enter, Control+A), on an element or the focused one.',
    inputSchema: {
      type: 'object',
      properties: {
        key: {
          type: 'string',
          minLength: 1,
        },
        ref: {
          type: 'string',
          description: 'Element ref from take_snapshot, e.g. e12',
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        snapshot: {
          description: 'also return the snapshot',
          type: 'boolean',
        },
      },
      required: ['key'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  handle_dialog: {
    name: 'handle_dialog',
    description: 'Accept or dismiss the open dialog of a tab.',
    inputSchema: {
      type: 'object',
      properties: {
        action: {
          type: 'string',
          enum: ['accept', 'dismiss'],
        },
        promptText: {
          type: 'string',
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        snapshot: {
          description: 'also return the snapshot',
          type: 'boolean',
        },
      },
      required: ['action'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  upload_file: {
    name: 'upload_file',
    description: 'Set local files on a file input.',
    inputSchema: {
      type: 'object',
      properties: {
        ref: {
          type: 'string',
          description: 'Element ref from take_snapshot, e.g. e12',
        },
        paths: {
          minItems: 1,
          type: 'array',
          items: {
            type: 'string',
            minLength: 1,
          },
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
      },
      required: ['ref', 'paths'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  evaluate_script: {
    name: 'evaluate_script',
    description:
      'Run a JavaScript function in the page and return its JSON result, e.g. "() => document.title".',
    inputSchema: {
      type: 'object',
      properties: {
        function: {
          type: 'string',
          minLength: 1,
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
      },
      required: ['function'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  list_site_tools: {
    name: 'list_site_tools',
    description: "List the tab's own WebMCP tools (name, hint, input schema).",
    inputSchema: {
      type: 'object',
      properties: {
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
      },
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  call_site_tool: {
    name: 'call_site_tool',
    description: "Call one of the tab's WebMCP tools (see list_site_tools).",
    inputSchema: {
      type: 'object',
      properties: {
        name: {
          type: 'string',
          minLength: 1,
        },
        arguments: {
          type: 'object',
          properties: {},
          additionalProperties: {},
        },
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
      },
      required: ['name'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  resize_page: {
    name: 'resize_page',
    description: 'Set the viewport size of a tab.',
    inputSchema: {
      type: 'object',
      properties: {
        width: {
          type: 'integer',
          minimum: 200,
          maximum: 7680,
        },
        height: {
          type: 'integer',
          minimum: 200,
          maximum: 4320,
        },
        pageId: {
          description: 'Tab id from list_pages; default: the selected tab',
          type: 'string',
        },
      },
      required: ['width', 'height'],
    },
    annotations: {
      destructiveHint: true,
    },
  },
  save_recipe: {
    name: 'save_recipe',
    description: "Save this session's successful steps as a recipe file (tabward run).",
    inputSchema: {
      type: 'object',
      properties: {
        name: {
          type: 'string',
        },
      },
    },
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
    },
  },
  browser_status: {
    name: 'browser_status',
    description: 'Browser mode (isolated/shared/remote), tabs and owners, approvals in force.',
    inputSchema: {
      type: 'object',
      properties: {},
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  browser_connect: {
    name: 'browser_connect',
    description:
      "Use the user's own Chrome and its logins (asks the user): for a login wall, a no-access page, a QR login.",
    inputSchema: {
      type: 'object',
      properties: {
        browserUrl: {
          description: 'e.g. http://127.0.0.1:9222; default: auto-discover',
          type: 'string',
        },
        wsEndpoint: {
          type: 'string',
        },
      },
    },
    annotations: {
      destructiveHint: false,
    },
  },
  browser_disconnect: {
    name: 'browser_disconnect',
    description: "Leave the user's Chrome open (the agent's tabs close) and go back to an isolated browser.",
    inputSchema: {
      type: 'object',
      properties: {},
    },
    annotations: {
      destructiveHint: false,
    },
  },
  list_console_messages: {
    name: 'list_console_messages',
    description: 'Console messages and uncaught errors of a tab. Full text: get_console_message.',
    inputSchema: {
      type: 'object',
      properties: {
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        pageSize: {
          description: 'default 100',
          type: 'integer',
          minimum: 1,
          maximum: 500,
        },
        pageIdx: {
          type: 'integer',
          minimum: 0,
          maximum: 9007199254740991,
        },
        includePreserved: {
          description: 'also the 2 pages before',
          type: 'boolean',
        },
        types: {
          description: 'e.g. error, warning',
          type: 'array',
          items: {
            type: 'string',
          },
        },
      },
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  get_console_message: {
    name: 'get_console_message',
    description: 'One console message in full.',
    inputSchema: {
      type: 'object',
      properties: {
        msgid: {
          type: 'integer',
          minimum: -9007199254740991,
          maximum: 9007199254740991,
        },
      },
      required: ['msgid'],
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  list_network_requests: {
    name: 'list_network_requests',
    description: 'Network requests of a tab. Headers and bodies: get_network_request.',
    inputSchema: {
      type: 'object',
      properties: {
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        pageSize: {
          description: 'default 100',
          type: 'integer',
          minimum: 1,
          maximum: 500,
        },
        pageIdx: {
          type: 'integer',
          minimum: 0,
          maximum: 9007199254740991,
        },
        includePreserved: {
          description: 'also the 2 pages before',
          type: 'boolean',
        },
        resourceTypes: {
          description: 'e.g. document, fetch, xhr, script',
          type: 'array',
          items: {
            type: 'string',
          },
        },
      },
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  get_network_request: {
    name: 'get_network_request',
    description: 'One request: headers and bodies (credentials redacted).',
    inputSchema: {
      type: 'object',
      properties: {
        reqid: {
          type: 'integer',
          minimum: -9007199254740991,
          maximum: 9007199254740991,
        },
      },
      required: ['reqid'],
    },
    annotations: {
      readOnlyHint: true,
    },
  },
  emulate: {
    name: 'emulate',
    description:
      'Emulate a viewport (and touch), user agent, network or CPU throttling, or color scheme in a tab.',
    inputSchema: {
      type: 'object',
      properties: {
        pageId: {
          description: 'Tab id; default: the selected tab',
          type: 'string',
        },
        viewport: {
          type: 'object',
          properties: {
            width: {
              type: 'integer',
              minimum: 200,
              maximum: 7680,
            },
            height: {
              type: 'integer',
              minimum: 200,
              maximum: 4320,
            },
            hasTouch: {
              type: 'boolean',
            },
          },
          required: ['width', 'height'],
          additionalProperties: false,
        },
        userAgent: {
          description: '"" for the default',
          type: 'string',
          maxLength: 500,
        },
        networkConditions: {
          type: 'string',
          enum: ['No emulation', 'Offline', 'Slow 3G', 'Fast 3G', 'Slow 4G', 'Fast 4G'],
        },
        cpuThrottlingRate: {
          description: '1 = off',
          type: 'number',
          minimum: 1,
          maximum: 20,
        },
        colorScheme: {
          type: 'string',
          enum: ['dark', 'light', 'auto'],
        },
      },
    },
    annotations: {
      destructiveHint: true,
    },
  },
};
