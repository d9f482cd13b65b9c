package main

import "testing"

func TestList(t *testing.T) {
	runTests(t, []cliTest{
		{
			name:  "list",
			setup: startAndWait("Fails", "null", "another"),
			args:  []string{"list"},
			wantStdout: `ID       NAME      STATUS     CREATED                   UPDATED
another  Fails     Failed     2025-01-02T03:04:09.000Z  2025-01-02T03:04:10.000Z
done     Greeting  Completed  2025-01-02T03:04:07.000Z  2025-01-02T03:04:08.000Z
`,
		},
		{
			name: "--json",
			args: []string{"list", "--json"},
			wantStdout: `{
  "instances": [
    {
      "id": "done",
      "name": "Greeting",
      "moduleHash": "` + hash + `",
      "executionId": 1,
      "status": "Completed",
      "input": "world",
      "result": "Hello, world!",
      "createdAt": "2025-01-02T03:04:07Z",
      "updatedAt": "2025-01-02T03:04:08Z"
    }
  ]
}
`,
		},
		{
			name:       "nothing",
			empty:      true,
			args:       []string{"list"},
			wantStdout: "no instances\n",
		},
		{
			name:       "nothing --json",
			empty:      true,
			args:       []string{"list", "--json"},
			wantStdout: "{\n  \"instances\": []\n}\n",
		},
		{
			name:       "an argument",
			args:       []string{"list", "all"},
			wantCode:   2,
			wantStderr: "durabox list: unexpected argument \"all\"\n", wantUsage: true,
		},
	})
}
