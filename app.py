"""TradingAgents Studio — entry point (routes only). The full app lands with the app issue."""

import streamlit as st

st.set_page_config(page_title="TradingAgents Studio", page_icon="📈", layout="wide")
st.title("TradingAgents Studio")
st.info("The engine is being built; the pages arrive with the app issue.")
