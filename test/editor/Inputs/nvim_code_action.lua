-- Neovim's built-in LSP client against clangd-optiml, headless: opens a .cu
-- file, asks for code actions on a kernel, picks one by its title (through
-- vim.ui.select, as a person would), lets the client apply the edit the
-- server sends back, and writes the file.
--
-- nvim --headless --clean -c 'luafile nvim_code_action.lua'
-- Environment: OPTIML_PROXY, OPTIML_CLANGD, OPTIML_CLI, CU_FILE (the file),
-- KERNEL_LINE (1-based line of the kernel), ACTION (text in the title).
local function fail(msg)
  io.stderr:write("nvim: FAIL: " .. msg .. "\n")
  vim.cmd("cquit 1")
end

local ok, err = pcall(function()
  local file = os.getenv("CU_FILE")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local id = vim.lsp.start_client({
    name = "clangd-optiml",
    cmd = { os.getenv("OPTIML_PROXY"), "--clangd=" .. os.getenv("OPTIML_CLANGD"),
            "--clang-optiml=" .. os.getenv("OPTIML_CLI") },
    root_dir = vim.fn.fnamemodify(file, ":h"),
  })
  if not id then return fail("the client did not start") end
  vim.lsp.buf_attach_client(0, id)
  local client
  if not vim.wait(300000, function()
    client = vim.lsp.get_client_by_id(id)
    return client ~= nil and client.server_capabilities ~= nil
  end, 50) then
    return fail("no initialize answer")
  end

  -- The cursor on the kernel's name.
  local line = tonumber(os.getenv("KERNEL_LINE"))
  local text = vim.api.nvim_buf_get_lines(0, line - 1, line, false)[1]
  vim.api.nvim_win_set_cursor(0, { line, (text:find("%(") or 2) - 2 })

  local want = os.getenv("ACTION")
  local chosen
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or item.title
      io.stdout:write("nvim: offered: " .. title .. "\n")
      if not chosen and title:find(want, 1, true) then
        chosen = title
        on_choice(item, i)
        return
      end
    end
    on_choice(nil, nil)
  end

  local tick = vim.api.nvim_buf_get_changedtick(0)
  -- The proxy analyses the buffer on didOpen; ask until it has answered
  -- (a code action list without ours means it is still parsing).
  for _ = 1, 30 do
    vim.lsp.buf.code_action()
    if vim.wait(2000, function() return chosen ~= nil end, 50) then break end
  end
  if not chosen then return fail("no code action titled '" .. want .. "'") end
  io.stdout:write("nvim: chose: " .. chosen .. "\n")
  if not vim.wait(300000, function()
    return vim.api.nvim_buf_get_changedtick(0) ~= tick
  end, 50) then
    return fail("the edit never reached the buffer")
  end
  vim.cmd("write")
  io.stdout:write("nvim: wrote " .. file .. "\n")
  vim.lsp.stop_client(id)
  vim.wait(5000, function() return vim.lsp.get_client_by_id(id) == nil end, 50)
  vim.cmd("qall!")
end)
if not ok then fail(tostring(err)) end
